// How deep JSON from a client, or from the model, may nest. nlohmann parses iteratively
// but writes JSON out recursively (error messages, grammar cache keys, tool call
// arguments), so a few hundred thousand '[' in a request or an answer would overflow a
// thread's stack the first time the value is written.
#pragma once

#include <string_view>

namespace qvl {

// Far deeper than any real request, schema or tool call.
inline constexpr int kMaxJsonDepth = 128;

// Whether a parse event opens a level beyond kMaxJsonDepth.
template <class Json>
bool OpensTooDeep(int depth, typename Json::parse_event_t event) {
  return depth >= kMaxJsonDepth &&
         (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start);
}

// `text` as JSON; discarded when malformed or nested deeper than kMaxJsonDepth.
template <class Json>
Json ParseBoundedJson(std::string_view text) {
  bool too_deep = false;
  Json json = Json::parse(
      text.begin(), text.end(),
      [&too_deep](int depth, typename Json::parse_event_t event, Json&) {
        too_deep = too_deep || OpensTooDeep<Json>(depth, event);
        return !too_deep;
      },
      /*allow_exceptions=*/false);
  return too_deep ? Json(Json::value_t::discarded) : json;
}

}  // namespace qvl
