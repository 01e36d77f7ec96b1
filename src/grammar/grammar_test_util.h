// Helpers shared by the grammar tests: the real Qwen vocabulary as a token table, whole
// strings fed byte by byte, and random generations driven by the token mask.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/token_table.h"
#include "text/test_tokenizer.h"
#include "text/tokenizer.h"

namespace qvl::grammar_test {

inline constexpr int64_t kVocabRows = 151936;
inline constexpr int32_t kEndOfText = 151643;
inline constexpr int32_t kImEnd = 151645;

inline const Tokenizer& QwenTokenizer() { return QwenTokenizerForTest(); }

inline std::shared_ptr<const TokenTable> QwenTokens() {
  static const std::shared_ptr<const TokenTable> table = [] {
    const int32_t eos[] = {kImEnd, kEndOfText};
    return BuildTokenTable(QwenTokenizer(), kVocabRows, eos);
  }();
  return table;
}

// True if `text` is a whole sentence of `grammar`.
inline bool Accepts(const std::shared_ptr<const Grammar>& grammar, const std::string& text) {
  GrammarMatcher matcher(grammar, QwenTokens());
  return matcher.AcceptBytes(text) && matcher.IsComplete();
}

inline bool MaskHas(const std::vector<uint32_t>& mask, int32_t id) {
  return mask[id >> 5] >> (id & 31) & 1;
}

inline std::vector<int32_t> AllowedTokens(const std::vector<uint32_t>& mask) {
  std::vector<int32_t> ids;
  for (size_t w = 0; w < mask.size(); ++w) {
    for (uint32_t word = mask[w]; word != 0; word &= word - 1) {
      ids.push_back(static_cast<int32_t>(w * 32 + std::countr_zero(word)));
    }
  }
  return ids;
}

struct Generation {
  std::string text;
  int64_t tokens = 0;
  bool ended_with_eos = false;
  bool complete = false;
};

// Samples allowed tokens uniformly until eos, termination or `max_tokens`; eos is taken
// with probability `eos_chance` when allowed (else the walk would stop at once).
inline Generation RandomGeneration(const std::shared_ptr<const Grammar>& grammar,
                                   int64_t max_tokens, std::mt19937* rng, double eos_chance = 0.3) {
  GrammarMatcher matcher(grammar, QwenTokens());
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  Generation out;
  while (out.tokens < max_tokens && !matcher.IsTerminated()) {
    matcher.FillNextTokenMask(mask, max_tokens - out.tokens);
    std::vector<int32_t> allowed = AllowedTokens(mask);
    if (allowed.empty()) break;
    const bool eos_allowed = MaskHas(mask, kImEnd);
    if (eos_allowed && std::uniform_real_distribution<double>(0, 1)(*rng) < eos_chance) {
      matcher.Accept(kImEnd);
      out.ended_with_eos = true;
      break;
    }
    std::erase_if(allowed, [](int32_t id) { return id == kImEnd || id == kEndOfText; });
    if (allowed.empty()) break;
    int32_t token = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(*rng)];
    if (!matcher.Accept(token)) break;
    out.text += std::string(QwenTokens()->Bytes(token));
    ++out.tokens;
  }
  out.complete = matcher.IsComplete();
  return out;
}

}  // namespace qvl::grammar_test
