#include "server/embeddings_encoder.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "base/error.h"
#include "ops/norm.h"
#include "server/base64.h"
#include "server/openai_format.h"

namespace qvl {
namespace {

// The first `dimensions` values scaled back to unit length; all of them (already of unit
// length) when `dimensions` is 0 or not below their count.
std::vector<float> Shortened(std::vector<float> values, int64_t dimensions) {
  if (dimensions <= 0 || static_cast<size_t>(dimensions) >= values.size()) return values;
  values.resize(static_cast<size_t>(dimensions));
  ScaleToUnitLength(values);
  return values;
}

// [v0,v1,...]: each the shortest text that reads back as the same float32 (nlohmann
// would widen it to double first, writing twice the digits); null for a value JSON cannot
// hold.
void AppendFloatArray(std::span<const float> values, std::string* out) {
  out->push_back('[');
  char text[32];
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    if (!std::isfinite(values[i])) {
      out->append("null");
      continue;
    }
    const std::to_chars_result end = std::to_chars(text, text + sizeof(text), values[i]);
    out->append(text, end.ptr);
  }
  out->push_back(']');
}

// OpenAI's base64 form: the little-endian float32 bytes, whatever the host's order.
std::string Base64Floats(std::span<const float> values) {
  std::vector<uint8_t> bytes;
  bytes.reserve(values.size() * 4);
  for (const float v : values) {
    const auto bits = std::bit_cast<uint32_t>(v);
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(static_cast<uint8_t>(bits >> shift));
  }
  return EncodeBase64(bytes);
}

int64_t Nanoseconds(double ms) { return std::llround(ms * 1e6); }

}  // namespace

EmbeddingsEncoder::EmbeddingsEncoder(EmbeddingsDialect dialect, std::string model, int inputs,
                                     bool base64, int64_t dimensions)
    : dialect_(dialect),
      model_(std::move(model)),
      base64_(base64),
      dimensions_(dimensions),
      embeddings_(static_cast<size_t>(std::max(inputs, 0))),
      done_(embeddings_.size(), false),
      unfinished_(static_cast<int>(embeddings_.size())) {
  if (unfinished_ == 0) {
    finished_ = true;
    summary_.finished = true;
    summary_.finish_reason = FinishReason::kStop;
  }
}

std::string EmbeddingsEncoder::Start() { return unfinished_ == 0 ? Body() : ""; }

std::string EmbeddingsEncoder::Encode(GenerationUpdate&& update) {
  if (finished_ || !update.finished || update.choice < 0 ||
      update.choice >= static_cast<int>(done_.size()) || done_[update.choice]) {
    return "";
  }
  done_[update.choice] = true;
  embeddings_[update.choice] = Shortened(std::move(update.embedding), dimensions_);
  summary_.usage.prompt_tokens += update.usage.prompt_tokens;
  summary_.usage.cached_tokens += update.usage.cached_tokens;
  if (update.timings.total_ms >= summary_.timings.total_ms) summary_.timings = update.timings;
  if (!CutShortReason(update).empty() && CutShortReason(summary_).empty()) {
    summary_.finish_reason = update.finish_reason;
    summary_.error = std::move(update.error);
    summary_.error_code = update.error_code;
  }
  if (--unfinished_ > 0) return "";
  finished_ = true;
  summary_.finished = true;
  if (summary_.finish_reason == FinishReason::kNone) summary_.finish_reason = FinishReason::kStop;
  return CutShortReason(summary_).empty() ? Body() : ErrorBody();
}

std::string EmbeddingsEncoder::ErrorBody() const {
  if (dialect_ != EmbeddingsDialect::kOpenAI) {
    return JsonText({{"error", CutShortReason(summary_)}});
  }
  return JsonText({{"error", CutShortErrorJson(summary_)}});
}

std::string EmbeddingsEncoder::Body() const {
  const int64_t prompt_tokens = summary_.usage.prompt_tokens;
  std::string out;
  if (dialect_ == EmbeddingsDialect::kOllamaLegacy) {
    out = "{\"embedding\":";
    AppendFloatArray(embeddings_.empty() ? std::span<const float>() : embeddings_[0], &out);
    out.push_back('}');
    return out;
  }
  if (dialect_ == EmbeddingsDialect::kOllama) {
    out = "{\"model\":" + JsonText(model_) + ",\"embeddings\":[";
    for (size_t i = 0; i < embeddings_.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendFloatArray(embeddings_[i], &out);
    }
    // qvl's model is always loaded: no load time.
    out += StrCat("],\"total_duration\":", Nanoseconds(summary_.timings.total_ms),
                  ",\"load_duration\":0,\"prompt_eval_count\":", prompt_tokens, "}");
    return out;
  }
  out = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < embeddings_.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += StrCat("{\"object\":\"embedding\",\"index\":", i, ",\"embedding\":");
    if (base64_) {
      out += StrCat("\"", Base64Floats(embeddings_[i]), "\"");
    } else {
      AppendFloatArray(embeddings_[i], &out);
    }
    out.push_back('}');
  }
  const nlohmann::json usage = {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}};
  out += StrCat("],\"model\":", JsonText(model_), ",\"usage\":", JsonText(usage), "}");
  return out;
}

}  // namespace qvl
