// libFuzzer target: any text as a GBNF grammar compiles or is refused with FieldError
// under the field it was given, never a crash, hang or unbounded allocation; a grammar
// that compiles must run (grammar_fuzz_walk.h). Seeds: fuzz_corpus/gbnf_grammar_fuzzer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/field_error.h"
#include "grammar/gbnf_grammar.h"
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
  std::shared_ptr<const qvl::Grammar> grammar;
  try {
    grammar = qvl::CompileGbnf(text, "grammar");
  } catch (const qvl::FieldError& e) {
    if (e.field() != "grammar") std::abort();
    return 0;
  }
  qvl::grammar_fuzz::WalkOrAbort(grammar, text);
  return 0;
}
