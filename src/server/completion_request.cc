#include "server/completion_request.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/field_error.h"
#include "server/generation_fields.h"
#include "server/output_controls.h"
#include "server/request_fields.h"
#include "server/server_dialects.h"

namespace qvl {

std::vector<int32_t> ParseTokenIds(const nlohmann::json& ids, const std::string& field) {
  if (ids.empty()) FailField(ErrorCode::kInvalidArgument, field, "must not be empty");
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out.push_back(ParseTokenId(ids[i], IndexField(field, i)));
  return out;
}

std::vector<std::string> PromptTexts(const std::vector<GenerationRequest>& prompts,
                                     const Tokenizer& tokenizer) {
  std::vector<std::string> out;
  out.reserve(prompts.size());
  for (const GenerationRequest& g : prompts) {
    out.push_back(g.prompt_text ? *g.prompt_text : tokenizer.Decode(g.prompt_tokens, false));
  }
  return out;
}

int32_t ParseTokenId(const nlohmann::json& id, const std::string& field) {
  if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
    FailField(ErrorCode::kInvalidArgument, field, "expected a token id (an integer from 0), got ",
              id.dump());
  }
  return static_cast<int32_t>(id.get<int64_t>());
}

void ParseCompletionPrompt(const nlohmann::json& prompt, const std::string& field,
                           GenerationRequest* g) {
  if (prompt.is_array()) {
    g->prompt_tokens = ParseTokenIds(prompt, field);
    g->messages_field = field;
    return;
  }
  if (!prompt.is_string()) {
    FailField(ErrorCode::kInvalidArgument, field, "expected a string or token ids, got ",
              JsonKind(prompt));
  }
  std::string text = prompt.get<std::string>();
  if (text.empty()) FailField(ErrorCode::kInvalidArgument, field, "must not be empty");
  g->prompt_text = std::move(text);
  g->messages_field = field;
}

std::vector<GenerationRequest> ParsePromptList(
    const RequestObject& body, const GenerationRequest& shared,
    const std::function<bool(const nlohmann::json&)>& is_one, const PromptReader& read) {
  const nlohmann::json* prompt = body.Find("prompt");
  if (prompt == nullptr) FailField(ErrorCode::kInvalidArgument, "prompt", "is required");
  std::vector<GenerationRequest> out;
  if (is_one(*prompt)) {
    read(*prompt, "prompt", &out.emplace_back(shared));
    return out;
  }
  if (prompt->empty()) FailField(ErrorCode::kInvalidArgument, "prompt", "must not be empty");
  if (prompt->size() > static_cast<size_t>(kMaxCompletionPrompts)) {
    FailField(ErrorCode::kInvalidArgument, "prompt", "at most ", kMaxCompletionPrompts,
              " prompts per request are supported, got ", prompt->size());
  }
  out.reserve(prompt->size());
  for (size_t i = 0; i < prompt->size(); ++i) {
    read((*prompt)[i], IndexField("prompt", i), &out.emplace_back(shared));
  }
  return out;
}

namespace {

// Features that change the answer: refused rather than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (!body.String("suffix").value_or("").empty()) {
    FailField(ErrorCode::kInvalidArgument, "suffix", "is not supported (no text insertion)");
  }
  if (const auto best_of = body.Int("best_of", 1, INT64_MAX); best_of && *best_of != 1) {
    FailField(ErrorCode::kInvalidArgument, "best_of", "only best_of = 1 is supported, got ",
              *best_of, " (as vLLM's; ask for n answers and choose among them)");
  }
  // Without a chat template there is no place for tools.
  for (const char* key : {"tools", "tool_choice"}) {
    if (const nlohmann::json* value = body.Find(key);
        value != nullptr && !(value->is_array() && value->empty())) {
      FailField(ErrorCode::kInvalidArgument, key,
                "is not supported on /v1/completions; use /v1/chat/completions");
    }
  }
}

}  // namespace

void ParseSharedCompletionFields(const RequestObject& body, std::string_view text,
                                 const ChatRequestPolicy& policy, CompletionRequest* out,
                                 GenerationRequest* g) {
  const StreamFields stream = ParseGenerationFields(body, policy.max_stop_strings, g);
  out->stream = stream.stream;
  out->include_usage = stream.include_usage;
  // Checked always, as on chat, but asked of the engine only when streamed: a whole answer
  // has nowhere to show it.
  out->return_progress = body.Bool("return_progress").value_or(false) && out->stream;
  g->report_progress = out->return_progress;
  ParseOutputControls(body, text, g);
  ParseOtherServersGenerationFields(body, g);
  ParseGuidedFields(body, text, g);
}

CompletionRequest ParseCompletionRequest(std::string_view text, const ChatRequestPolicy& policy) {
  nlohmann::json json = ParseJsonBody(text);
  CompletionRequest out;
  // The prompt alone, scored (vLLM's, and how lm-evaluation-harness's older OpenAI path
  // asks): the engine reads it as for one token, which the answers leave out.
  if (const auto echo = json.find("echo"), max = json.find("max_tokens");
      json.is_object() && echo != json.end() && *echo == true && max != json.end() &&
      max->is_number_integer() && *max == 0) {
    out.prompt_only = true;
    *max = 1;
  }
  const RequestObject body(json, "");
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest g;
  ParseSharedCompletionFields(body, text, policy, &out, &g);
  if (g.max_tokens == 0) g.max_tokens = kDefaultTextCompletionTokens;
  out.logprobs = static_cast<int>(body.Int("logprobs", 0, kMaxLegacyLogprobs).value_or(-1));
  g.top_logprobs = out.logprobs;
  out.echo = body.Bool("echo").value_or(false);
  // vLLM's prompt_logprobs (read by the shared fields into g.prompt_logprobs) and an echo
  // with logprobs ask the engine for the prompt's scores; it computes the most either asks.
  if (const nlohmann::json* asked = body.Find("prompt_logprobs");
      asked != nullptr && !asked->is_null()) {
    out.prompt_logprobs = g.prompt_logprobs;
  }
  if (out.echo) g.prompt_logprobs = std::max(g.prompt_logprobs, out.logprobs);
  // A string, or ids: one prompt; any other array lists prompts (OpenAI's shapes).
  out.generations = ParsePromptList(
      body, g,
      [](const nlohmann::json& p) {
        return !p.is_array() || (!p.empty() && p.front().is_number());
      },
      ParseCompletionPrompt);
  if (out.generations.size() * static_cast<size_t>(g.n) > static_cast<size_t>(kMaxChoices)) {
    FailField(ErrorCode::kInvalidArgument, "n", "prompts times n must be at most ", kMaxChoices,
              ", got ", out.generations.size(), " x ", g.n);
  }
  return out;
}

}  // namespace qvl
