// The JSON shapes of OpenAI's chat completion API that qvl sends back: completions,
// stream chunks, usage, logprobs, the model list, plus qvl's `timings` object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/request.h"
#include "server/api_error.h"
#include "server/tool_call_parser.h"

namespace qvl {

// Whether the answers to `request` on `engine` start with a Thinking model's reasoning
// (OpensReasoning), which the encoders then split from the reply.
bool SplitsReasoning(const Engine& engine, const GenerationRequest& request);

// What every response and chunk of one completion repeats.
struct CompletionIdentity {
  std::string id;       // "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// `prefix` ("chatcmpl-", "cmpl-") followed by 24 random hex digits.
std::string NewCompletionId(std::string_view prefix = "chatcmpl-");

// Compact JSON text; invalid UTF-8 (a token that ends inside a character) becomes U+FFFD
// instead of an exception.
std::string JsonText(const nlohmann::json& value);

// "data: <json>\n\n": one server-sent event.
std::string SseEvent(const nlohmann::json& value);
// "event: <name>\ndata: <json>\n\n": one typed server-sent event (the Responses API).
std::string SseEvent(std::string_view name, const nlohmann::json& value);

// OpenAI's finish_reason: "stop" or "length". An answer that ended for any other reason
// (the server shut down, the engine failed) is cut short, as by max_tokens, so it reports
// "length" (never a name OpenAI clients do not know), and says why in CutShortErrorJson.
std::string FinishReasonText(FinishReason reason);
// Why the answer ended early; "" when it ended by a stop or its length.
std::string CutShortReason(const GenerationUpdate& final_update);
// The error of an answer cut short (CutShortReason not empty): a shutdown is unavailable
// (503's type), which clients retry; a failure keeps the engine's code.
ApiError CutShortError(const GenerationUpdate& final_update);
// Adds an answer's final update to `summary`, its request as a whole: the answer's
// completion and reasoning tokens; the prompt's tokens when `counts_prompt` (the first
// answer to its prompt); the timings of the request's `first` answer; and how the request
// ended: as its first answer did, unless another was cut short first.
void AddAnswerToSummary(const GenerationUpdate& update, bool first, bool counts_prompt,
                        GenerationUpdate* summary);
// For an answer of its prompt alone (max_tokens 0 on /v1/completions, n_predict 0 on
// /completion), which the engine reads as for one token: leaves that token out of
// `update` (text, tokens, completion_tokens), and a final update ends by "length"
// whatever ended the token.
void LeaveOutTheAnswer(GenerationUpdate* update);
// OpenAI's error object ({"message","type","param","code"}) for CutShortReason, or null.
nlohmann::json CutShortErrorJson(const GenerationUpdate& final_update);
// vLLM's stop_reason, which clients written for vLLM read beside finish_reason: the stop
// string that ended the answer, else the stop token id, else null (an end-of-sequence
// token, max_tokens, a grammar completed, an answer cut short).
nlohmann::json StopReasonJson(const GenerationUpdate& final_update);

// With completion_tokens_details.reasoning_tokens when the answer had reasoning (a
// Thinking model's: OpenAI counts it in completion_tokens and names it there).
nlohmann::json UsageJson(const Usage& usage);
// Milliseconds per stage (`upload_ms`: the request body arriving, before the engine's),
// throughput, and the effective grid of every image.
// An image's or video's size, grid and token cost (a video's frames and timestamp text
// too), as timings and /tokenize report it.
nlohmann::json MediaCostJson(const ImageGrid& grid);
nlohmann::json TimingsJson(const Timings& timings, double upload_ms);
// {"content":[{"token","logprob","bytes","top_logprobs":[...]}]}
nlohmann::json LogprobsJson(const std::vector<GeneratedToken>& tokens);
// The "content" array of LogprobsJson, appended to `entries` (an array).
void AppendLogprobEntries(const std::vector<GeneratedToken>& tokens, nlohmann::json* entries);
// vLLM's prompt_logprobs of a prompt's entries (GenerationUpdate::prompt_tokens): null for
// the first token, then per token {"<id>": {"logprob", "rank", "decoded_token"}} for it and
// its `n` most likely alternatives (ranks 1 to n).
nlohmann::json PromptLogprobsJson(const std::vector<GeneratedToken>& prompt, int n);

// [{"index", "id", "type": "function", "function": {"name", "arguments"}}], the first
// numbered `first_index` (a choice's calls are numbered from 0 across chunks).
nlohmann::json ToolCallsJson(const std::vector<ParsedToolCall>& calls, int first_index);

// One choice of a non-streamed response, `stop_reason` (StopReasonJson) beside
// finish_reason. With tool calls, text that is only whitespace is no content (null), as
// OpenAI sends it. `reasoning` (a Thinking model's; null for others) is
// message.reasoning_content, as vLLM and llama-server send it.
nlohmann::json ChoiceJson(int index, const std::string& text,
                          const std::vector<ParsedToolCall>& calls,
                          const std::vector<GeneratedToken>* logprobs,
                          const std::string& finish_reason, nlohmann::json stop_reason,
                          const std::string* reasoning = nullptr);

// A complete non-streamed response: `choices`, and usage and timings from `summary`
// (`upload_ms` 0 for a request that came from no client: `qvl run --json`).
nlohmann::json CompletionJson(const CompletionIdentity& identity, nlohmann::json choices,
                              const GenerationUpdate& summary, double upload_ms = 0);

// One chunk of a streamed response for choice `index`; `finish_reason` null until that
// choice's last chunk, which alone carries `stop_reason` (StopReasonJson), as vLLM's
// chunks do.
// llama-server's prompt_progress {total, cache, processed, time_ms}, and qvl's vision: the
// share of the images' encoding done (1 when there is none to do).
nlohmann::json PromptProgressJson(const PromptProgress& progress);

nlohmann::json ChunkJson(const CompletionIdentity& identity, int index, nlohmann::json delta,
                         nlohmann::json logprobs, nlohmann::json finish_reason,
                         nlohmann::json stop_reason = nullptr);

// What a model object tells of the loaded model, so that clients size their context
// window from it instead of a guess: the server's context (a request's prompt and answer
// together) and the model's own sizes.
struct ServedModelSizes {
  int64_t context_tokens = 0;   // --ctx-size
  int64_t trained_context = 0;  // the config's max_position_embeddings
  int64_t vocab = 0;
  int64_t hidden = 0;
};

// GET /v1/models/{id}: one model object. It carries Anthropic's fields (type,
// display_name, created_at) beside OpenAI's, so that both APIs' SDKs read the same route.
// With `sizes` (once the model is loaded) also vLLM's max_model_len and OpenRouter's
// context_length (the server's context) and llama-server's meta (n_ctx_train, n_vocab,
// n_embd).
nlohmann::json ModelJson(const std::string& name, int64_t created,
                         const std::optional<ServedModelSizes>& sizes);
// GET /v1/models: the served model and its aliases, as OpenAI's list and Anthropic's page
// (has_more, first_id, last_id).
nlohmann::json ModelListJson(const std::vector<std::string>& names, int64_t created,
                             const std::optional<ServedModelSizes>& sizes);

// Unix seconds as RFC 3339 in UTC ("2026-12-06T03:01:30Z").
std::string Rfc3339(int64_t unix_seconds);

}  // namespace qvl
