#include "server/completion_encoder.h"

namespace qvl {

CompletionEncoder::CompletionEncoder(CompletionIdentity identity, const EncoderOptions& options)
    : identity_(std::move(identity)), options_(options) {}

std::string CompletionEncoder::Start() {
  if (!options_.stream) return "";
  nlohmann::json delta = {{"role", "assistant"}, {"content", ""}};
  return SseEvent(ChunkJson(identity_, std::move(delta), nullptr, nullptr));
}

std::string CompletionEncoder::Encode(GenerationUpdate&& update) {
  if (finished_) return "";
  if (update.finished) finished_ = true;
  return options_.stream ? EncodeStreamed(std::move(update)) : EncodeFinal(std::move(update));
}

std::string CompletionEncoder::EncodeStreamed(GenerationUpdate&& update) {
  std::string out;
  if (!update.text.empty() || (options_.logprobs && !update.tokens.empty())) {
    nlohmann::json logprobs =
        options_.logprobs ? LogprobsJson(update.tokens) : nlohmann::json(nullptr);
    out += SseEvent(ChunkJson(identity_, {{"content", update.text}}, std::move(logprobs), nullptr));
  }
  if (!update.finished) return out;
  nlohmann::json last = ChunkJson(identity_, nlohmann::json::object(), nullptr,
                                  FinishReasonText(update.finish_reason));
  last["timings"] = TimingsJson(update.timings);
  if (nlohmann::json error = CutShortErrorJson(update); !error.is_null()) {
    last["error"] = std::move(error);
  }
  if (options_.include_usage) last["usage"] = nullptr;
  out += SseEvent(last);
  if (options_.include_usage) {
    nlohmann::json usage = ChunkJson(identity_, nullptr, nullptr, nullptr);
    usage["choices"] = nlohmann::json::array();
    usage["usage"] = UsageJson(update.usage);
    out += SseEvent(usage);
  }
  out += "data: [DONE]\n\n";
  return out;
}

std::string CompletionEncoder::EncodeFinal(GenerationUpdate&& update) {
  text_ += update.text;
  if (options_.logprobs) {
    for (GeneratedToken& t : update.tokens) tokens_.push_back(std::move(t));
  }
  if (!update.finished) return "";
  nlohmann::json body =
      CompletionJson(identity_, text_, options_.logprobs ? &tokens_ : nullptr, update);
  if (nlohmann::json error = CutShortErrorJson(update); !error.is_null()) {
    body["error"] = std::move(error);
  }
  return JsonText(body);
}

}  // namespace qvl
