#include "text/pretokenizer.h"

#include <cstdint>

#include "text/unicode.h"
#include "text/utf8.h"

namespace qvl::text {
namespace {

struct Char {
  CharClass cls;
  uint32_t length;
};

Char CharAt(std::string_view text, size_t pos) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  if (lead < 0x80) return {ClassifyCodePoint(lead), 1};
  const Utf8Sequence seq = ScanUtf8(text, pos);
  if (seq.status != Utf8Status::kValid)
    return {CharClass::kOther, static_cast<uint32_t>(seq.length)};
  return {ClassifyCodePoint(DecodeUtf8(text, pos, seq.length)), static_cast<uint32_t>(seq.length)};
}

bool IsSpace(CharClass cls) { return cls == CharClass::kSpace || cls == CharClass::kNewline; }

size_t SkipClass(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    const Char c = CharAt(text, pos);
    if (c.cls != cls) break;
    pos += c.length;
  }
  return pos;
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

// Length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at text[pos] == '\'', or 0. Under Unicode case
// folding U+017F (long s) matches 's' as well.
size_t ContractionLength(std::string_view text, size_t pos) {
  if (pos + 1 >= text.size()) return 0;
  const char first = AsciiLower(text[pos + 1]);
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  if (text.substr(pos + 1, 2) == "\xC5\xBF") return 3;
  if (pos + 2 >= text.size()) return 0;
  const char second = AsciiLower(text[pos + 2]);
  if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
      (first == 'l' && second == 'l')) {
    return 3;
  }
  return 0;
}

}  // namespace

size_t NextPieceEnd(std::string_view text, size_t begin) {
  const size_t size = text.size();
  const Char c = CharAt(text, begin);
  const size_t after = begin + c.length;

  if (text[begin] == '\'') {
    if (const size_t length = ContractionLength(text, begin)) return begin + length;
  }

  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.cls == CharClass::kLetter) return SkipClass(text, after, CharClass::kLetter);
  const bool has_next = after < size;
  const CharClass next = has_next ? CharAt(text, after).cls : CharClass::kOther;
  if ((c.cls == CharClass::kSpace || c.cls == CharClass::kOther) && has_next &&
      next == CharClass::kLetter) {
    return SkipClass(text, after, CharClass::kLetter);
  }

  // \p{N}
  if (c.cls == CharClass::kNumber) return after;

  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  if (c.cls == CharClass::kOther || (text[begin] == ' ' && has_next && next == CharClass::kOther)) {
    const size_t others_end = SkipClass(text, after, CharClass::kOther);
    return SkipClass(text, others_end, CharClass::kNewline);
  }

  // Only whitespace is left. Scan its run, noting the last newline and the last char.
  size_t run_end = begin;
  size_t last_newline_end = 0;
  size_t last_char_begin = begin;
  while (run_end < size) {
    const Char w = CharAt(text, run_end);
    if (!IsSpace(w.cls)) break;
    last_char_begin = run_end;
    run_end += w.length;
    if (w.cls == CharClass::kNewline) last_newline_end = run_end;
  }
  if (last_newline_end != 0) return last_newline_end;  // \s*[\r\n]+
  if (run_end == size) return run_end;                 // \s+(?!\S) up to the end
  // \s+(?!\S) stops before the last space, which then prefixes the next piece; a lone
  // space can only be \s+.
  return last_char_begin > begin ? last_char_begin : run_end;
}

}  // namespace qvl::text
