// GPT-2's reversible map between bytes and printable characters, used by byte-level BPE
// vocabularies: the printable bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for
// themselves, the other 68 bytes for U+0100, U+0101, ... in byte order (so a space is
// 'Ġ' = U+0120 and a newline 'Ċ' = U+010A).
#pragma once

#include <array>
#include <cstdint>

namespace qvl::text {

namespace byte_alphabet_internal {

constexpr bool StandsForItself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

constexpr std::array<char16_t, 256> MakeByteToChar() {
  std::array<char16_t, 256> table{};
  char16_t next = 0x100;
  for (int byte = 0; byte < 256; ++byte) {
    table[byte] = StandsForItself(byte) ? static_cast<char16_t>(byte) : next++;
  }
  return table;
}

// All characters of the alphabet are below U+0144.
inline constexpr char32_t kAlphabetEnd = 0x144;

constexpr std::array<int16_t, kAlphabetEnd> MakeCharToByte() {
  std::array<int16_t, kAlphabetEnd> table{};
  table.fill(-1);
  const std::array<char16_t, 256> byte_to_char = MakeByteToChar();
  for (int byte = 0; byte < 256; ++byte) table[byte_to_char[byte]] = static_cast<int16_t>(byte);
  return table;
}

}  // namespace byte_alphabet_internal

inline constexpr std::array<char16_t, 256> kByteToChar = byte_alphabet_internal::MakeByteToChar();

// The byte a character of the alphabet stands for, or -1.
constexpr int CharToByte(char32_t c) {
  constexpr auto kTable = byte_alphabet_internal::MakeCharToByte();
  return c < byte_alphabet_internal::kAlphabetEnd ? kTable[c] : -1;
}

}  // namespace qvl::text
