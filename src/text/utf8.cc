#include "text/utf8.h"

#include <cstdint>

namespace qvl::text {

Utf8Sequence ScanUtf8(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(pos);
  if (lead < 0x80) return {Utf8Status::kValid, 1};

  // Well-formed sequences (Unicode table 3-7): the lead byte fixes the length and the
  // range allowed for the second byte, which excludes overlongs and surrogates.
  size_t length;
  uint8_t second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return {Utf8Status::kInvalid, 1};
  }

  for (size_t i = 1; i < length; ++i) {
    if (pos + i == text.size()) return {Utf8Status::kTruncated, i};
    const uint8_t b = byte(pos + i);
    const bool ok = i == 1 ? (b >= second_min && b <= second_max) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return {Utf8Status::kInvalid, i};
  }
  return {Utf8Status::kValid, length};
}

char32_t DecodeUtf8(std::string_view text, size_t pos, size_t length) {
  const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<uint8_t>(text[i])); };
  switch (length) {
    case 1:
      return byte(pos);
    case 2:
      return (byte(pos) & 0x1F) << 6 | (byte(pos + 1) & 0x3F);
    case 3:
      return (byte(pos) & 0x0F) << 12 | (byte(pos + 1) & 0x3F) << 6 | (byte(pos + 2) & 0x3F);
    default:
      return (byte(pos) & 0x07) << 18 | (byte(pos + 1) & 0x3F) << 12 | (byte(pos + 2) & 0x3F) << 6 |
             (byte(pos + 3) & 0x3F);
  }
}

bool IsValidUtf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Sequence seq = ScanUtf8(text, pos);
    if (seq.status != Utf8Status::kValid) return false;
    pos += seq.length;
  }
  return true;
}

void AppendReplacingInvalidUtf8(std::string_view bytes, std::string* out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    // Copy the longest well-formed run in one append.
    size_t run_end = pos;
    Utf8Sequence seq{Utf8Status::kValid, 0};
    while (run_end < bytes.size()) {
      seq = ScanUtf8(bytes, run_end);
      if (seq.status != Utf8Status::kValid) break;
      run_end += seq.length;
    }
    out->append(bytes.substr(pos, run_end - pos));
    if (run_end == bytes.size()) break;
    out->append(kReplacementCharacter);
    pos = run_end + seq.length;
  }
}

void AppendUtf8(char32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace qvl::text
