#include "server/base64.h"

#include <array>

#include "base/field_error.h"

namespace qvl {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr int8_t kInvalid = -1;
constexpr int8_t kPadding = -2;

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  for (int8_t& v : table) v = kInvalid;
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  table['='] = kPadding;
  return table;
}

constexpr std::array<int8_t, 256> kDecodeTable = MakeDecodeTable();

// How a character looks in an error message: printable ASCII as is, the rest as a code.
std::string Describe(unsigned char c) {
  if (c == ' ') return "' ' (space)";
  if (c >= 0x21 && c < 0x7f) return StrCat("'", static_cast<char>(c), "'");
  static const char kHex[] = "0123456789abcdef";
  return StrCat("byte 0x", kHex[c >> 4], kHex[c & 15]);
}

// `text` without the line breaks of MIME's wrapped base64 (Python's encodebytes, the
// base64 and openssl tools), which carry no data; `storage` holds the copy when there are
// any.
std::string_view WithoutLineBreaks(std::string_view text, std::string* storage) {
  if (text.find_first_of("\r\n") == std::string_view::npos) return text;
  storage->reserve(text.size());
  for (const char c : text) {
    if (c != '\r' && c != '\n') storage->push_back(c);
  }
  return *storage;
}

}  // namespace

size_t Base64DecodedSize(std::string_view text) {
  std::string storage;
  text = WithoutLineBreaks(text, &storage);
  size_t size = text.size() / 4 * 3;
  if (!text.empty() && text.back() == '=') --size;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --size;
  return size;
}

std::vector<uint8_t> DecodeBase64(std::string_view text, std::string_view field) {
  std::string storage;
  text = WithoutLineBreaks(text, &storage);
  if (text.empty()) FailField(ErrorCode::kInvalidArgument, field, "the base64 data is empty");
  if (text.size() % 4 != 0) {
    FailField(ErrorCode::kInvalidArgument, field, "invalid base64: length ", text.size(),
              " is not a multiple of 4 (missing '=' padding or truncated data?)");
  }
  const size_t padding_start = text.size() - (text.back() != '='             ? 0
                                              : text[text.size() - 2] == '=' ? 2
                                                                             : 1);
  std::vector<uint8_t> out;
  out.reserve(Base64DecodedSize(text));
  uint32_t accumulator = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const int8_t value = kDecodeTable[c];
    if (value == kInvalid) {
      FailField(ErrorCode::kInvalidArgument, field, "invalid base64: character ", Describe(c),
                " at offset ", i);
    }
    if (value == kPadding) {
      if (i < padding_start) {
        FailField(ErrorCode::kInvalidArgument, field, "invalid base64: '=' at offset ", i,
                  " before the end of the data");
      }
      accumulator <<= 6;
    } else {
      accumulator = (accumulator << 6) | static_cast<uint32_t>(value);
    }
    if (i % 4 == 3) {
      out.push_back(static_cast<uint8_t>(accumulator >> 16));
      out.push_back(static_cast<uint8_t>(accumulator >> 8));
      out.push_back(static_cast<uint8_t>(accumulator));
      accumulator = 0;
    }
  }
  out.resize(Base64DecodedSize(text));
  return out;
}

std::string EncodeBase64(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t{bytes[i]} << 16 | uint32_t{bytes[i + 1]} << 8 | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{bytes[i]} << 16;
    if (rest == 2) v |= uint32_t{bytes[i + 1]} << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace qvl
