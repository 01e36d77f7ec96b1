// The Qwen2 split regex run by PCRE2 with JIT: the reference that the hand-written
// scanner (pretokenizer.h) is tested and benchmarked against. Not linked into qvl.
//
// `tokenizers` runs the regex with Oniguruma, whose \s is the Unicode White_Space
// property. PCRE2's \s also takes U+180E, so the pattern spells \s out as
// [\t-\r\x{85}\p{Z}], which is White_Space exactly.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/unicode.h"

namespace qvl::text {

class Pcre2PreTokenizer {
 public:
  Pcre2PreTokenizer();
  ~Pcre2PreTokenizer();
  Pcre2PreTokenizer(const Pcre2PreTokenizer&) = delete;
  Pcre2PreTokenizer& operator=(const Pcre2PreTokenizer&) = delete;

  // The successive matches in `text` (valid UTF-8). Throws Error(kInternal) if they
  // leave a gap, which the regex never should.
  std::vector<std::string_view> Split(std::string_view text) const;

  // The class PCRE2 gives a code point: \p{L}, \p{N}, [\r\n], \s or other.
  CharClass Classify(char32_t code_point) const;

  // The pattern as given to PCRE2.
  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::string pattern_;
  std::unique_ptr<Compiled> split_;
  std::unique_ptr<Compiled> letter_;
  std::unique_ptr<Compiled> number_;
  std::unique_ptr<Compiled> space_;
};

}  // namespace qvl::text
