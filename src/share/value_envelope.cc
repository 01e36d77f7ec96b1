#include "share/value_envelope.h"

#include <cstring>

namespace qvl {
namespace {

constexpr size_t kMagicBytes = 4;
// magic, version, key check, payload bytes, payload checksum
constexpr size_t kHeaderBytes = kMagicBytes + 4 + 8 + 8 + 8;

constexpr uint64_t kMul1 = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMul2 = 0xc2b2ae3d27d4eb4full;

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
T Take(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

uint64_t Checksum64(std::span<const uint8_t> bytes) {
  // Four independent lanes keep the multiplier busy; the tail and the length are mixed
  // in at the end.
  uint64_t h[4] = {kMul1, kMul2, kMul1 ^ kMul2, ~kMul1};
  const size_t words = bytes.size() / 8;
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + (i + k) * 8, 8);
      h[k] = Rotl(h[k] ^ (w * kMul2), 31) * kMul1;
    }
  }
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i * 8, 8);
    h[0] = Rotl(h[0] ^ (w * kMul2), 31) * kMul1;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + words * 8, bytes.size() - words * 8);
  uint64_t out = bytes.size() * kMul1 ^ tail * kMul2;
  for (uint64_t lane : h) out = Rotl(out ^ lane, 27) * kMul1 + kMul2;
  out ^= out >> 33;
  out *= kMul2;
  out ^= out >> 29;
  return out;
}

std::string SealValue(std::string_view magic, uint32_t version, std::string_view key,
                      std::string_view payload) {
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  out.append(magic.substr(0, kMagicBytes));
  out.resize(kMagicBytes, ' ');
  Put(&out, version);
  Put(&out, Checksum64(key));
  Put(&out, static_cast<uint64_t>(payload.size()));
  Put(&out, Checksum64(payload));
  out.append(payload);
  return out;
}

std::optional<std::string_view> OpenValue(std::string_view magic, uint32_t version,
                                          std::string_view key, std::string_view value) {
  if (value.size() < kHeaderBytes || value.substr(0, kMagicBytes) != magic.substr(0, kMagicBytes))
    return std::nullopt;
  const char* p = value.data() + kMagicBytes;
  if (Take<uint32_t>(p) != version) return std::nullopt;
  if (Take<uint64_t>(p + 4) != Checksum64(key)) return std::nullopt;
  const uint64_t size = Take<uint64_t>(p + 12);
  if (size != value.size() - kHeaderBytes) return std::nullopt;
  const std::string_view payload = value.substr(kHeaderBytes);
  if (Take<uint64_t>(p + 20) != Checksum64(payload)) return std::nullopt;
  return payload;
}

}  // namespace qvl
