// The fields every generation request shares, whichever API it comes through
// (/v1/chat/completions, /v1/completions): the JSON body itself, "model", sampling,
// stop strings, max_tokens and streaming. One parser, one set of ranges and messages.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/request_fields.h"

namespace qvl {

// The body as a JSON object. Throws FieldError (no field) for malformed JSON, nesting
// deeper than any real request, and a body that is not an object.
nlohmann::json ParseJsonBody(std::string_view body);

// "model" as the client gave it ("" when absent). Throws FieldError(kNotFound, "model")
// unless it is one of `names` (empty = any).
std::string ParseModel(const RequestObject& body, const std::vector<std::string>& names);

struct StreamFields {
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Where an API takes its token limit: each field is checked, and the last one given wins.
// Chat and completions take max_tokens and max_completion_tokens, the Responses API
// max_output_tokens.
inline constexpr const char* kChatTokenLimitFields[] = {"max_tokens", "max_completion_tokens"};
inline constexpr const char* kResponsesTokenLimitFields[] = {"max_output_tokens"};

// temperature, top_p, top_k, min_p, the penalties, typical_p and Mirostat (llama-server's
// and Ollama's) and seed of `object`, each under its range's name (request_ranges.h) but the
// repetition penalty, which Ollama calls repeat_penalty.
void ParseSamplingFields(const RequestObject& object, SamplingParams* s,
                         std::string_view repetition_penalty_key = "repetition_penalty");

// `object`'s "stop": a string or up to `max_stop` strings, none empty or too long.
void ParseStopField(const RequestObject& object, int max_stop, std::vector<std::string>* stop);

// The fields every API reads alike, in this order: stream and stream_options, the token
// limit from `token_limit_fields` (0 when none is given; the name the client used goes to
// g->max_tokens_field, and the engine checks the value against the prompt), temperature,
// top_p, top_k, min_p, the penalties, seed, stop (a string or up to `max_stop` strings)
// and ignore_eos; then OpenAI's bookkeeping fields (user, metadata, store, service_tier,
// ...), which change no answer but are checked for their types and limits.
StreamFields ParseGenerationFields(
    const RequestObject& body, int max_stop, GenerationRequest* g,
    std::span<const char* const> token_limit_fields = kChatTokenLimitFields);

}  // namespace qvl
