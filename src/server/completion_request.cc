#include "server/completion_request.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/field_error.h"
#include "server/generation_fields.h"
#include "server/request_fields.h"
#include "server/server_dialects.h"

namespace qvl {

std::vector<int32_t> ParseTokenIds(const nlohmann::json& ids, const std::string& field) {
  if (ids.empty()) FailField(ErrorCode::kInvalidArgument, field, "must not be empty");
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const nlohmann::json& id = ids[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      FailField(ErrorCode::kInvalidArgument, IndexField(field, i),
                "expected a token id (an integer from 0), got ", id.dump());
    }
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

namespace {

// "prompt": a string or token ids, either alone or as the one item of an array.
void ParsePrompt(const RequestObject& body, GenerationRequest* g) {
  const nlohmann::json* prompt = body.Find("prompt");
  if (prompt == nullptr) FailField(ErrorCode::kInvalidArgument, "prompt", "is required");
  const nlohmann::json* one = prompt;
  std::string field = "prompt";
  if (prompt->is_array() && !prompt->empty() && prompt->front().is_number()) {
    g->prompt_tokens = ParseTokenIds(*prompt, field);
    return;
  }
  if (prompt->is_array()) {
    if (prompt->size() != 1) {
      FailField(ErrorCode::kInvalidArgument, "prompt",
                "only one prompt per request is supported, got an array of ", prompt->size());
    }
    one = &(*prompt)[0];
    field = IndexField("prompt", 0);
  }
  if (one->is_array()) {
    g->prompt_tokens = ParseTokenIds(*one, field);
    return;
  }
  if (!one->is_string()) {
    FailField(ErrorCode::kInvalidArgument, field, "expected a string or token ids, got ",
              JsonKind(*one));
  }
  std::string text = one->get<std::string>();
  if (text.empty()) FailField(ErrorCode::kInvalidArgument, field, "must not be empty");
  g->prompt_text = std::move(text);
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
  // The chat route's: without a chat template there is no place for tools, and a format
  // that was not honoured would pass for one that was.
  if (const nlohmann::json* format = body.Find("response_format");
      format != nullptr && !(format->is_object() && format->value("type", "") == "text")) {
    FailField(ErrorCode::kInvalidArgument, "response_format",
              "is not supported on /v1/completions; use /v1/chat/completions");
  }
  for (const char* key : {"tools", "tool_choice"}) {
    if (const nlohmann::json* value = body.Find(key);
        value != nullptr && !(value->is_array() && value->empty())) {
      FailField(ErrorCode::kInvalidArgument, key,
                "is not supported on /v1/completions; use /v1/chat/completions");
    }
  }
}

}  // namespace

CompletionRequest ParseCompletionRequest(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  CompletionRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  const StreamFields stream = ParseGenerationFields(body, policy.max_stop_strings, &g);
  out.stream = stream.stream;
  out.include_usage = stream.include_usage;
  // Checked always, as on chat, but asked of the engine only when streamed: a whole answer
  // has nowhere to show it.
  out.return_progress = body.Bool("return_progress").value_or(false) && out.stream;
  g.report_progress = out.return_progress;
  ParseOtherServersGenerationFields(body, &g);
  ParseGuidedFields(body, text, &g);
  if (g.max_tokens == 0) g.max_tokens = kDefaultTextCompletionTokens;
  out.logprobs = static_cast<int>(body.Int("logprobs", 0, kMaxLegacyLogprobs).value_or(-1));
  g.top_logprobs = out.logprobs;
  ParsePrompt(body, &g);
  g.messages_field = "prompt";
  return out;
}

}  // namespace qvl
