#include "text/unicode.h"

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

#include "base/error.h"
#include "text/utf8.h"

namespace qvl::text {
namespace {

constexpr std::array<CharClass, 128> MakeAsciiClasses() {
  std::array<CharClass, 128> classes{};
  for (int c = 0; c < 128; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      classes[c] = CharClass::kLetter;
    } else if (c >= '0' && c <= '9') {
      classes[c] = CharClass::kNumber;
    } else if (c == '\r' || c == '\n') {
      classes[c] = CharClass::kNewline;
    } else if (c == '\t' || c == '\v' || c == '\f' || c == ' ') {
      classes[c] = CharClass::kSpace;
    } else {
      classes[c] = CharClass::kOther;
    }
  }
  return classes;
}

constexpr std::array<CharClass, 128> kAsciiClasses = MakeAsciiClasses();

// White_Space beyond ASCII (PropList.txt): NEL and the Zs / Zl / Zp characters.
bool IsNonAsciiWhiteSpace(char32_t c) {
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// NFC leaves a string alone when each of its characters is its own NFC, has combining
// class 0 and is never the second half of a composition: then nothing reorders and
// nothing composes across characters. The non-first parts of all canonical
// decompositions cover every second half (Hangul jamo included). Tabulated for the
// planes where text lives (BMP, SMP, SIP); the rest always goes through utf8proc.
constexpr char32_t kInertTableSize = 0x30000;

std::vector<bool> BuildNfcInertTable() {
  std::vector<bool> inert(kInertTableSize, true);
  std::vector<bool> second(kInertTableSize, false);
  for (char32_t c = 0; c < kInertTableSize; ++c) {
    const auto code_point = static_cast<utf8proc_int32_t>(c);
    if (utf8proc_get_property(code_point)->combining_class != 0) inert[c] = false;
    utf8proc_int32_t parts[8];
    int boundclass = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char(
        code_point, parts, 8, static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE), &boundclass);
    if (n == 1 && parts[0] == code_point) continue;
    if (n < 1 || n > 8) {
      inert[c] = false;
      continue;
    }
    for (utf8proc_ssize_t i = 1; i < n; ++i) {
      if (static_cast<char32_t>(parts[i]) < kInertTableSize) second[parts[i]] = true;
    }
    // Composing the decomposition again must give the character back.
    const utf8proc_ssize_t composed =
        utf8proc_normalize_utf32(parts, n, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE));
    if (composed != 1 || parts[0] != code_point) inert[c] = false;
  }
  for (char32_t c = 0; c < kInertTableSize; ++c) {
    if (second[c]) inert[c] = false;
  }
  return inert;
}

// True when NFC(text) == text is certain without normalizing.
bool IsNfcInert(std::string_view text) {
  static const std::vector<bool> inert = BuildNfcInertTable();
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Sequence seq = ScanUtf8(text, pos);
    if (seq.status != Utf8Status::kValid) return false;
    const char32_t c = DecodeUtf8(text, pos, seq.length);
    if (c >= kInertTableSize || !inert[c]) return false;
    pos += seq.length;
  }
  return true;
}

}  // namespace

CharClass ClassifyCodePoint(char32_t code_point) {
  if (code_point < 0x80) return kAsciiClasses[code_point];
  if (IsNonAsciiWhiteSpace(code_point)) return CharClass::kSpace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(code_point))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return CharClass::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::kNumber;
    default:
      return CharClass::kOther;
  }
}

void AppendNfc(std::string_view text, std::string* out) {
  if (IsNfcInert(text)) {
    out->append(text);
    return;
  }
  utf8proc_uint8_t* normalized = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &normalized,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (length < 0) Fail(ErrorCode::kInternal, "NFC normalization failed: ", utf8proc_errmsg(length));
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(normalized, &std::free);
  out->append(reinterpret_cast<const char*>(normalized), static_cast<size_t>(length));
}

}  // namespace qvl::text
