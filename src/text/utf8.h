// UTF-8 scanning shared by the tokenizer and the streaming detokenizer. Ill-formed
// input is replaced the way Python's bytes.decode(errors="replace") and Rust's
// String::from_utf8_lossy do it (Unicode "maximal subpart" practice), so decoded text
// matches the Hugging Face reference byte for byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qvl::text {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

enum class Utf8Status {
  kValid,      // a complete, well-formed character
  kTruncated,  // a well-formed prefix that the end of the input cuts short
  kInvalid,    // an ill-formed subsequence: stands for one U+FFFD
};

struct Utf8Sequence {
  Utf8Status status;
  size_t length;  // bytes taken by the character, the prefix or the ill-formed subpart
};

// Classifies the sequence starting at text[pos]; pos < text.size().
Utf8Sequence ScanUtf8(std::string_view text, size_t pos);

// Decodes the well-formed character of `length` bytes at text[pos] (from ScanUtf8).
char32_t DecodeUtf8(std::string_view text, size_t pos, size_t length);

bool IsValidUtf8(std::string_view text);

// Appends `bytes` to `out`, replacing each ill-formed subpart (and a truncated tail)
// with U+FFFD.
void AppendReplacingInvalidUtf8(std::string_view bytes, std::string* out);

// Appends the UTF-8 encoding of a Unicode scalar value.
void AppendUtf8(char32_t code_point, std::string* out);

}  // namespace qvl::text
