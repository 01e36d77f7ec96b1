// The frame around every value qvl keeps in a shared cache: a magic naming the kind of
// value, a format version, a check of the key it was written under (a value copied to
// another key is refused) and a checksum of the payload. Whatever Redis returns —
// a value of an older qvl, a truncated or hand-edited one — is either exactly what was
// sealed or refused.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace qvl {

// A fast 64-bit checksum (not cryptographic: it finds corruption, not forgery; whoever
// can write to Redis is trusted).
uint64_t Checksum64(std::span<const uint8_t> bytes);
inline uint64_t Checksum64(std::string_view s) {
  return Checksum64({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

// `magic` is four characters naming the value's kind ("QVLE": encodings, "QVLA": answers).
std::string SealValue(std::string_view magic, uint32_t version, std::string_view key,
                      std::string_view payload);

// The payload of `value` (a view into it), or nullopt when it is not a value of this
// magic, version and key, or its checksum does not match.
std::optional<std::string_view> OpenValue(std::string_view magic, uint32_t version,
                                          std::string_view key, std::string_view value);

}  // namespace qvl
