// What the grammar fuzz targets check once a grammar compiled: it runs. A walk of a few
// tokens, each chosen from the mask by a hash of the fuzz input (with the real Qwen
// vocabulary), must find a way forward at every step and the matcher must accept every
// token the mask allows; std::abort (a libFuzzer finding) if not.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar_matcher.h"
#include "grammar/token_table.h"
#include "text/test_tokenizer.h"

namespace qvl::grammar_fuzz {

inline constexpr int32_t kImEnd = 151645;

inline const std::shared_ptr<const TokenTable>& QwenTokens() {
  static const std::shared_ptr<const TokenTable> tokens = [] {
    const int32_t eos[] = {kImEnd};
    return BuildTokenTable(QwenTokenizerForTest(), 151936, eos);
  }();
  return tokens;
}

inline void WalkOrAbort(const std::shared_ptr<const Grammar>& grammar, std::string_view input) {
  GrammarMatcher matcher(grammar, QwenTokens());
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  uint64_t hash = 1469598103934665603u;
  for (char byte : input) hash = (hash ^ static_cast<uint8_t>(byte)) * 1099511628211u;
  for (int step = 0; step < 6 && !matcher.IsTerminated(); ++step) {
    matcher.FillNextTokenMask(mask, 8 - step);
    std::vector<int32_t> allowed;
    for (size_t w = 0; w < mask.size(); ++w) {
      for (uint32_t word = mask[w]; word != 0; word &= word - 1) {
        allowed.push_back(static_cast<int32_t>(w * 32 + __builtin_ctz(word)));
      }
    }
    if (allowed.empty()) std::abort();  // a live state always has a way forward
    hash = hash * 6364136223846793005u + 1442695040888963407u;
    const int32_t token = allowed[(hash >> 33) % allowed.size()];
    if (!GrammarMatcher(matcher).Accept(token)) std::abort();
    if (!matcher.Accept(token)) std::abort();
    if (token == kImEnd) break;
  }
}

}  // namespace qvl::grammar_fuzz
