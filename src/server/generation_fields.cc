#include "server/generation_fields.h"

#include "base/field_error.h"
#include "server/served_models.h"

namespace qvl {
namespace {

constexpr size_t kMaxStopLength = 512;
// Far deeper than any real request. nlohmann parses iteratively but serializes
// recursively (error messages, tool call arguments): a body of a few hundred thousand
// '[' would otherwise overflow the HTTP thread's stack.
constexpr int kMaxJsonDepth = 128;

}  // namespace

nlohmann::json ParseJsonBody(std::string_view body) {
  const nlohmann::json::parser_callback_t limit_depth =
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (depth >= kMaxJsonDepth && (event == nlohmann::json::parse_event_t::object_start ||
                                       event == nlohmann::json::parse_event_t::array_start)) {
          FailField(ErrorCode::kInvalidArgument, "", "the request body nests JSON deeper than ",
                    kMaxJsonDepth, " levels");
        }
        return true;
      };
  try {
    return nlohmann::json::parse(body.begin(), body.end(), limit_depth);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number beyond double ("1e999").
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..." -> from "parse".
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    FailField(ErrorCode::kInvalidArgument, "", "malformed JSON in the request body: ", what);
  }
}

std::string ParseModel(const RequestObject& body, const std::vector<std::string>& names) {
  std::string model = body.String("model").value_or("");
  if (!model.empty() && !names.empty()) RequireServedModel(model, names);
  return model;
}

void ParseSampling(const RequestObject& body, SamplingParams* s) {
  if (auto v = body.Number("temperature", 0, 2)) s->temperature = static_cast<float>(*v);
  if (auto v = body.Number("top_p", 0, 1, /*min_exclusive=*/true))
    s->top_p = static_cast<float>(*v);
  if (auto v = body.Int("top_k", -1, 1 << 20)) s->top_k = static_cast<int>(*v < 0 ? 0 : *v);
  if (auto v = body.Number("min_p", 0, 1)) s->min_p = static_cast<float>(*v);
  if (auto v = body.Number("presence_penalty", -2, 2)) s->presence_penalty = static_cast<float>(*v);
  if (auto v = body.Number("frequency_penalty", -2, 2)) {
    s->frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = body.Number("repetition_penalty", 0, 10, /*min_exclusive=*/true)) {
    s->repetition_penalty = static_cast<float>(*v);
  }
  if (auto v = body.Int("seed", INT64_MIN, INT64_MAX)) s->seed = static_cast<uint64_t>(*v);
}

void ParseStop(const RequestObject& body, int max_stop, std::vector<std::string>* stop) {
  const nlohmann::json* value = body.Find("stop");
  if (value == nullptr) return;
  auto add = [&](const nlohmann::json& item, const std::string& field) {
    if (!item.is_string()) {
      FailField(ErrorCode::kInvalidArgument, field, "expected a string, got ", JsonKind(item));
    }
    std::string s = item.get<std::string>();
    if (s.empty()) FailField(ErrorCode::kInvalidArgument, field, "stop strings cannot be empty");
    if (s.size() > kMaxStopLength) {
      FailField(ErrorCode::kInvalidArgument, field, "stop strings can be at most ", kMaxStopLength,
                " bytes long");
    }
    stop->push_back(std::move(s));
  };
  if (value->is_string()) {
    add(*value, "stop");
    return;
  }
  if (!value->is_array()) {
    FailField(ErrorCode::kInvalidArgument, "stop", "expected a string or an array of strings, got ",
              JsonKind(*value));
  }
  if (static_cast<int>(value->size()) > max_stop) {
    FailField(ErrorCode::kInvalidArgument, "stop", "at most ", max_stop,
              " stop strings are supported, got ", value->size());
  }
  for (size_t i = 0; i < value->size(); ++i) add((*value)[i], IndexField("stop", i));
}

int ParseMaxTokens(const RequestObject& body, int max_tokens) {
  const auto tokens = body.Int("max_tokens", 1, max_tokens);
  const auto completion = body.Int("max_completion_tokens", 1, max_tokens);
  return static_cast<int>(completion.value_or(tokens.value_or(0)));
}

StreamFields ParseStreamFields(const RequestObject& body) {
  StreamFields out;
  out.stream = body.Bool("stream").value_or(false);
  if (const nlohmann::json* options = body.Find("stream_options")) {
    out.include_usage =
        RequestObject(*options, "stream_options").Bool("include_usage").value_or(false);
  }
  return out;
}

}  // namespace qvl
