// The accepted range of every numeric request parameter, in one table that the HTTP API
// parser, `qvl run`'s flags and the engine's ResolveSampling all read, so that a value
// is either accepted everywhere or refused everywhere with the same words.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qvl {

struct ParamRange {
  const char* name;  // the request field ("temperature"), also how errors name it
  double min;
  double max;
  bool min_exclusive = false;  // (min, max] instead of [min, max]

  bool Contains(double value) const {
    return (min_exclusive ? value > min : value >= min) && value <= max;
  }
  // "between 0 and 2", "greater than 0 and at most 1".
  std::string Describe() const;
};

namespace request_ranges {
inline constexpr ParamRange kTemperature{"temperature", 0, 2};  // 0 = greedy
inline constexpr ParamRange kTopP{"top_p", 0, 1, true};
inline constexpr ParamRange kTopK{"top_k", -1, 1 << 20};  // -1 and 0 = off
inline constexpr ParamRange kMinP{"min_p", 0, 1};
inline constexpr ParamRange kRepetitionPenalty{"repetition_penalty", 0, 10, true};
inline constexpr ParamRange kPresencePenalty{"presence_penalty", -2, 2};
inline constexpr ParamRange kFrequencyPenalty{"frequency_penalty", -2, 2};
inline constexpr ParamRange kTypicalP{"typical_p", 0, 1};        // 1 = off
inline constexpr ParamRange kTopNSigma{"top_n_sigma", -1, 100};  // <= 0 = off
inline constexpr ParamRange kXtcProbability{"xtc_probability", 0, 1};
inline constexpr ParamRange kXtcThreshold{"xtc_threshold", 0, 1};  // above 0.5 = off
inline constexpr ParamRange kDynatempRange{"dynatemp_range", 0, kTemperature.max};
inline constexpr ParamRange kDynatempExponent{"dynatemp_exponent", 0, 10};
inline constexpr ParamRange kMirostat{"mirostat", 0, 2};  // 0 = off, version 1 or 2
inline constexpr ParamRange kMirostatTau{"mirostat_tau", 0, 100};
inline constexpr ParamRange kMirostatEta{"mirostat_eta", 0, 10};
inline constexpr ParamRange kMaxTokens{"max_tokens", 1, 1 << 20};
inline constexpr ParamRange kTopLogprobs{"top_logprobs", 0, 20};
inline constexpr ParamRange kPromptLogprobs{"prompt_logprobs", 0, kTopLogprobs.max};
inline constexpr ParamRange kMinTokens{"min_tokens", 0, kMaxTokens.max};
// vLLM's name for GenerationRequest::reasoning_budget.
inline constexpr ParamRange kThinkingTokenBudget{"thinking_token_budget", 0, kMaxTokens.max};
// Most stop_token_ids a request may list: each is looked for at every token.
inline constexpr int kMaxStopTokenIds = 64;
// Most token sequences vLLM's bad_words may tokenize to, and their tokens in all, as vLLM
// caps them: each sequence is compared with the answer's end at every token.
inline constexpr int kMaxBadWordSequences = 128;
inline constexpr int kMaxBadWordTokens = 1024;
}  // namespace request_ranges

// Throws FieldError(kInvalidArgument, range.name, "must be <Describe()>, got VALUE").
void CheckInRange(const ParamRange& range, double value);

// Throws FieldError(kInvalidArgument, field, ...) unless 0 <= id < vocab (logits rows, or a
// tokenizer's ids), naming the vocabulary's range.
void CheckTokenId(std::string_view field, int64_t id, int64_t vocab);

}  // namespace qvl
