// libFuzzer target: TakeInlineMedia, which reads the untrusted request body with its own
// scan of the JSON before the JSON parser sees it, for every route's media fields.
// Whatever the body, only payload bytes inside strings leave it: a body the JSON parser
// accepts before is accepted after, with the same shape, and each decoded payload is
// handed out once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "server/inline_media.h"

namespace {

// The fields of `j` whose value is a string, with the strings emptied: what the scan may
// change is the strings' content, never the structure around them.
nlohmann::json Shape(const nlohmann::json& j) {
  if (j.is_string()) return "";
  if (!j.is_structured()) return j;
  nlohmann::json out = j.is_object() ? nlohmann::json::object() : nlohmann::json::array();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (j.is_object()) {
      out[it.key()] = Shape(*it);
    } else {
      out.push_back(Shape(*it));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string original(reinterpret_cast<const char*>(data), size);
  const nlohmann::json before = nlohmann::json::parse(original, nullptr, false);
  // Each route's media fields, and one of them to hand out twice.
  const std::pair<qvl::MediaLayout, const char*> layouts[] = {
      {qvl::MediaLayout::kChatCompletions, "messages[0].content[0].image_url.url"},
      {qvl::MediaLayout::kResponses, "input[0].content[0].image_url"},
      {qvl::MediaLayout::kOllamaChat, "messages[0].images[0]"},
      {qvl::MediaLayout::kOllamaGenerate, "images[0]"},
      {qvl::MediaLayout::kAnthropicMessages, "messages[0].content[0].source.data"},
  };
  for (const auto& [layout, field] : layouts) {
    std::string body = original;
    qvl::InlineMedia media = qvl::TakeInlineMedia(&body, layout);
    if (body.size() > original.size()) std::abort();
    if (!before.is_discarded()) {
      const nlohmann::json after = nlohmann::json::parse(body, nullptr, false);
      if (after.is_discarded() || Shape(after) != Shape(before)) std::abort();
    }
    if (media.Take(field) && media.Take(field)) std::abort();
  }
  return 0;
}
