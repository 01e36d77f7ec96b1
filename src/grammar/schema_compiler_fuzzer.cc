// libFuzzer target: any JSON as a schema compiles or is refused with FieldError, never a
// crash, hang or unbounded allocation. A schema that compiles must then run: a walk of
// a few tokens chosen by the input's hash from each mask (with the real Qwen vocabulary)
// accepts every allowed token, and only allowed ones. Seeds: fuzz_corpus/schema_compiler_fuzzer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/token_table.h"
#include "text/test_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const qvl::TokenTable> tokens = [] {
    const int32_t eos[] = {151645};
    return qvl::BuildTokenTable(qvl::QwenTokenizerForTest(), 151936, eos);
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  std::shared_ptr<const qvl::Grammar> grammar;
  try {
    grammar = qvl::CompileJsonSchema(schema);
  } catch (const qvl::FieldError&) {
    return 0;
  }
  qvl::GrammarMatcher matcher(grammar, tokens);
  std::vector<uint32_t> mask(tokens->mask_words());
  uint64_t hash = 1469598103934665603u;
  for (uint8_t byte : text) hash = (hash ^ byte) * 1099511628211u;
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
    if (!qvl::GrammarMatcher(matcher).Accept(token)) std::abort();
    if (!matcher.Accept(token)) std::abort();
    if (token == 151645) break;
  }
  return 0;
}
