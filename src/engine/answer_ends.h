// vLLM's stop_token_ids and min_tokens, checked against the vocabulary and the answer's
// length before any engine work, as logit_bias and max_tokens are.
#pragma once

#include <cstdint>

#include "engine/output_stream.h"
#include "engine/request.h"

namespace qvl {

// Sets limits->stop_token_ids and min_tokens from `request`: at most kMaxStopTokenIds
// ids, each in [0, vocab) (FieldError at "stop_token_ids[i]"); min_tokens in kMinTokens
// and at most the max_tokens asked for. Without one, limits->max_tokens (the server's
// default, cut to `room`, the tokens the context leaves after the prompt) grows to
// min_tokens; past `room` that is a kContextLength error naming min_tokens.
void PrepareAnswerEnds(const GenerationRequest& request, int64_t vocab, int64_t room,
                       OutputLimits* limits);

}  // namespace qvl
