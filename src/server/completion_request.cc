#include "server/completion_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/field_error.h"
#include "server/generation_fields.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

// "prompt": a string, or an array holding one string.
std::string ParsePrompt(const RequestObject& body) {
  const nlohmann::json* prompt = body.Find("prompt");
  if (prompt == nullptr) FailField(ErrorCode::kInvalidArgument, "prompt", "is required");
  const nlohmann::json* text = prompt;
  if (prompt->is_array()) {
    if (prompt->size() != 1) {
      FailField(ErrorCode::kInvalidArgument, "prompt",
                "only one prompt per request is supported, got an array of ", prompt->size());
    }
    text = &(*prompt)[0];
  }
  if (text->is_number_integer() || text->is_array()) {
    FailField(ErrorCode::kInvalidArgument, "prompt",
              "token-id prompts are not supported; send the prompt as a string");
  }
  if (!text->is_string()) {
    FailField(ErrorCode::kInvalidArgument, "prompt", "expected a string, got ", JsonKind(*text));
  }
  std::string out = text->get<std::string>();
  if (out.empty()) FailField(ErrorCode::kInvalidArgument, "prompt", "must not be empty");
  return out;
}

// Features that change the answer: refused rather than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (body.Bool("echo").value_or(false)) {
    FailField(ErrorCode::kInvalidArgument, "echo", "is not supported (the prompt is not returned)");
  }
  if (!body.String("suffix").value_or("").empty()) {
    FailField(ErrorCode::kInvalidArgument, "suffix", "is not supported (no text insertion)");
  }
  if (const auto best_of = body.Int("best_of", 1, INT64_MAX); best_of && *best_of != 1) {
    FailField(ErrorCode::kInvalidArgument, "best_of", "only best_of = 1 is supported, got ",
              *best_of);
  }
  if (const nlohmann::json* n = body.Find("n")) {
    if (!(n->is_number_integer() && n->get<int64_t>() == 1)) {
      FailField(ErrorCode::kInvalidArgument, "n", "only n = 1 is supported, got ", n->dump());
    }
  }
  if (const nlohmann::json* bias = body.Find("logit_bias");
      bias != nullptr && !(bias->is_object() && bias->empty())) {
    FailField(ErrorCode::kInvalidArgument, "logit_bias", "is not supported on /v1/completions");
  }
}

}  // namespace

CompletionRequest ParseCompletionRequest(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  if (!json.is_object()) {
    FailField(ErrorCode::kInvalidArgument, "", "the request body must be a JSON object, got ",
              JsonKind(json));
  }
  const RequestObject body(json, "");
  CompletionRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  const StreamFields stream = ParseStreamFields(body);
  out.stream = stream.stream;
  out.include_usage = stream.include_usage;
  const int max_tokens = ParseMaxTokens(body, policy.max_completion_tokens);
  g.max_tokens = max_tokens > 0
                     ? max_tokens
                     : std::min(kDefaultTextCompletionTokens, policy.max_completion_tokens);
  ParseSampling(body, &g.sampling);
  ParseStop(body, policy.max_stop_strings, &g.stop);
  g.ignore_eos = body.Bool("ignore_eos").value_or(false);
  out.logprobs = static_cast<int>(body.Int("logprobs", 0, kMaxLegacyLogprobs).value_or(-1));
  g.top_logprobs = out.logprobs;
  g.prompt_text = ParsePrompt(body);
  return out;
}

}  // namespace qvl
