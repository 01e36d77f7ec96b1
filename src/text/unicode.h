// The Unicode character data the tokenizer needs, from utf8proc: the classes the Qwen2
// pre-tokenizer regex tests (\p{L}, \p{N}, \s) and NFC normalization.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qvl::text {

enum class CharClass : uint8_t {
  kLetter,   // \p{L}
  kNumber,   // \p{N}
  kNewline,  // \r or \n (also \s)
  kSpace,    // any other \s: the Unicode White_Space property, as Oniguruma's \s
  kOther,
};

CharClass ClassifyCodePoint(char32_t code_point);

// Appends the NFC form of `text` (valid UTF-8) to `out`.
void AppendNfc(std::string_view text, std::string* out);

}  // namespace qvl::text
