// The real Qwen3 tokenizer of the test fixtures, loaded once per test binary.
#pragma once

#include <string>

#include "text/tokenizer.h"

namespace qvl {

inline const Tokenizer& QwenTokenizerForTest() {
  static const Tokenizer* tokenizer = new Tokenizer(
      Tokenizer::FromFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model/tokenizer.json"));
  return *tokenizer;
}

}  // namespace qvl
