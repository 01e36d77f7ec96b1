#include "server/generation_fields.h"

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/json_depth.h"
#include "server/served_models.h"

namespace qvl {
namespace {

constexpr size_t kMaxStopLength = 512;

nlohmann::json ParseJson(std::string_view body) {
  // A POST without Content-Length has an empty body (gated_http_server.h): say so rather
  // than "unexpected end of input".
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    FailField(ErrorCode::kInvalidArgument, "",
              "the request body is empty: send the request as a JSON object with its "
              "Content-Length");
  }
  const nlohmann::json::parser_callback_t limit_depth =
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (OpensTooDeep<nlohmann::json>(depth, event)) {
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

std::optional<double> ReadNumber(const RequestObject& body, const ParamRange& range,
                                 std::string_view key) {
  return body.Number(key, range.min, range.max, range.min_exclusive);
}

void ParseMaxTokens(const RequestObject& body, std::span<const char* const> fields,
                    GenerationRequest* g) {
  // The engine checks them against the prompt; the bound here keeps them within int.
  const auto bound = static_cast<int64_t>(request_ranges::kMaxTokens.max);
  for (const char* field : fields) {
    if (const auto tokens = body.Int(field, 1, bound)) {
      g->max_tokens = static_cast<int>(*tokens);
      g->max_tokens_field = field;
    }
  }
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

// OpenAI's limits on metadata (16 keys of up to 64 characters, values up to 512).
constexpr size_t kMaxMetadataKeys = 16;
constexpr size_t kMaxMetadataKeyChars = 64;
constexpr size_t kMaxMetadataValueChars = 512;

// Characters of UTF-8 text: bytes that do not continue a character.
size_t CharCount(const std::string& text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// OpenAI's bookkeeping fields, which change no answer: unused, but a wrong type or size
// is a 400 on every route, as OpenAI answers it, rather than silently accepted.
void CheckBookkeepingFields(const RequestObject& body) {
  for (const char* key : {"user", "safety_identifier", "prompt_cache_key", "service_tier"}) {
    body.String(key);
  }
  body.Bool("store");
  const nlohmann::json* metadata = body.Find("metadata");
  if (metadata == nullptr) return;
  const RequestObject object(*metadata, "metadata");
  if (metadata->size() > kMaxMetadataKeys) {
    FailField(ErrorCode::kInvalidArgument, "metadata", "at most ", kMaxMetadataKeys,
              " keys are allowed, got ", metadata->size());
  }
  for (const auto& [key, value] : metadata->items()) {
    if (CharCount(key) > kMaxMetadataKeyChars) {
      FailField(ErrorCode::kInvalidArgument, object.Field(key), "keys can be at most ",
                kMaxMetadataKeyChars, " characters long");
    }
    const std::optional<std::string> text = object.String(key);
    if (text && CharCount(*text) > kMaxMetadataValueChars) {
      FailField(ErrorCode::kInvalidArgument, object.Field(key), "values can be at most ",
                kMaxMetadataValueChars, " characters long");
    }
  }
}

}  // namespace

void ParseSamplingFields(const RequestObject& body, SamplingParams* s,
                         std::string_view repetition_penalty_key) {
  namespace r = request_ranges;
  auto as_float = [](std::optional<double> v) {
    return v ? std::optional<float>(static_cast<float>(*v)) : std::nullopt;
  };
  s->temperature = as_float(ReadNumber(body, r::kTemperature, r::kTemperature.name));
  s->top_p = as_float(ReadNumber(body, r::kTopP, r::kTopP.name));
  if (auto v = body.Int(r::kTopK.name, static_cast<int64_t>(r::kTopK.min),
                        static_cast<int64_t>(r::kTopK.max))) {
    s->top_k = static_cast<int>(*v < 0 ? 0 : *v);
  }
  s->min_p = as_float(ReadNumber(body, r::kMinP, r::kMinP.name));
  s->presence_penalty = as_float(ReadNumber(body, r::kPresencePenalty, r::kPresencePenalty.name));
  s->frequency_penalty =
      as_float(ReadNumber(body, r::kFrequencyPenalty, r::kFrequencyPenalty.name));
  s->repetition_penalty = as_float(ReadNumber(body, r::kRepetitionPenalty, repetition_penalty_key));
  s->typical_p = as_float(ReadNumber(body, r::kTypicalP, r::kTypicalP.name));
  if (auto v = body.Int(r::kMirostat.name, static_cast<int64_t>(r::kMirostat.min),
                        static_cast<int64_t>(r::kMirostat.max))) {
    s->mirostat = static_cast<int>(*v);
  }
  s->mirostat_tau = as_float(ReadNumber(body, r::kMirostatTau, r::kMirostatTau.name));
  s->mirostat_eta = as_float(ReadNumber(body, r::kMirostatEta, r::kMirostatEta.name));
  if (auto v = body.Int("seed", INT64_MIN, INT64_MAX)) s->seed = static_cast<uint64_t>(*v);
}

void ParseStopField(const RequestObject& body, int max_stop, std::vector<std::string>* stop) {
  const nlohmann::json* value = body.Find("stop");
  if (value == nullptr) return;
  const std::string stop_field = body.Field("stop");
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
    add(*value, stop_field);
    return;
  }
  if (!value->is_array()) {
    FailField(ErrorCode::kInvalidArgument, stop_field,
              "expected a string or an array of strings, got ", JsonKind(*value));
  }
  if (static_cast<int>(value->size()) > max_stop) {
    FailField(ErrorCode::kInvalidArgument, stop_field, "at most ", max_stop,
              " stop strings are supported, got ", value->size());
  }
  for (size_t i = 0; i < value->size(); ++i) add((*value)[i], IndexField(stop_field, i));
}

nlohmann::json ParseJsonBody(std::string_view text) {
  nlohmann::json json = ParseJson(text);
  if (!json.is_object()) {
    FailField(ErrorCode::kInvalidArgument, "", "the request body must be a JSON object, got ",
              JsonKind(json));
  }
  return json;
}

std::string ParseModel(const RequestObject& body, const std::vector<std::string>& names) {
  std::string model = body.String("model").value_or("");
  if (!model.empty() && !names.empty()) RequireServedModel(model, names);
  return model;
}

StreamFields ParseGenerationFields(const RequestObject& body, int max_stop, GenerationRequest* g,
                                   std::span<const char* const> token_limit_fields) {
  const StreamFields stream = ParseStreamFields(body);
  ParseMaxTokens(body, token_limit_fields, g);
  ParseSamplingFields(body, &g->sampling);
  ParseStopField(body, max_stop, &g->stop);
  g->ignore_eos = body.Bool("ignore_eos").value_or(false);
  CheckBookkeepingFields(body);
  return stream;
}

}  // namespace qvl
