// libFuzzer target: any JSON as a schema compiles or is refused with FieldError, never a
// crash, hang or unbounded allocation. A schema that compiles must then run
// (grammar_fuzz_walk.h). Seeds: fuzz_corpus/schema_compiler_fuzzer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_fuzz_walk.h"

// The token table is built once before libFuzzer starts timing inputs: under ASan on a
// busy machine it takes longer than a run's -timeout (13 s at load 7.5 on 2 cores), which
// reported the first input as a timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  qvl::grammar_fuzz::QwenTokens();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  std::shared_ptr<const qvl::Grammar> grammar;
  try {
    grammar = qvl::CompileJsonSchema(schema);
  } catch (const qvl::FieldError&) {
    return 0;
  }
  qvl::grammar_fuzz::WalkOrAbort(grammar, text);
  return 0;
}
