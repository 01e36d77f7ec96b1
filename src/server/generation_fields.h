// The fields every generation request shares, whichever API it comes through
// (/v1/chat/completions, /v1/completions): the JSON body itself, "model", sampling,
// stop strings, max_tokens and streaming. One parser, one set of ranges and messages.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/request_fields.h"

namespace qvl {

// The body as JSON. Throws FieldError (no field) for malformed JSON and for nesting
// deeper than any real request.
nlohmann::json ParseJsonBody(std::string_view body);

// "model" as the client gave it ("" when absent). Throws FieldError(kNotFound, "model")
// unless it is one of `names` (empty = any).
std::string ParseModel(const RequestObject& body, const std::vector<std::string>& names);

// temperature, top_p, top_k, min_p, presence/frequency/repetition_penalty, seed.
void ParseSampling(const RequestObject& body, SamplingParams* s);
// "stop": a string or up to `max_stop` strings.
void ParseStop(const RequestObject& body, int max_stop, std::vector<std::string>* stop);
// max_completion_tokens, else max_tokens, into g->max_tokens (0 when neither is given)
// and the name the client used into g->max_tokens_field; the engine checks the value
// against the prompt and the context.
void ParseMaxTokens(const RequestObject& body, GenerationRequest* g);

struct StreamFields {
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};
StreamFields ParseStreamFields(const RequestObject& body);

}  // namespace qvl
