// libFuzzer target: base64 and data: URL decoding. The input is decoded as base64 (the
// decoded size must be what Base64DecodedSize predicted, and decoding what our own
// encoder makes of the result must give it back), encoded and decoded back (exactly the
// input), and read as a data: URL by LoadImageBytes with a policy that allows neither
// files nor the network. Only FieldError may come out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/field_error.h"
#include "server/base64.h"
#include "server/image_source.h"

namespace {

std::string EncodeBase64(const uint8_t* data, size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t b0 = data[i];
    const uint32_t b1 = i + 1 < size ? data[i + 1] : 0;
    const uint32_t b2 = i + 2 < size ? data[i + 2] : 0;
    const uint32_t group = b0 << 16 | b1 << 8 | b2;
    out.push_back(kAlphabet[group >> 18 & 63]);
    out.push_back(kAlphabet[group >> 12 & 63]);
    out.push_back(i + 1 < size ? kAlphabet[group >> 6 & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[group & 63] : '=');
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<uint8_t> decoded = qvl::DecodeBase64(text, "fuzz");
    if (decoded.size() != qvl::Base64DecodedSize(text)) std::abort();
    const std::string again = EncodeBase64(decoded.data(), decoded.size());
    if (qvl::DecodeBase64(again, "fuzz") != decoded) std::abort();
  } catch (const qvl::FieldError&) {
  }

  if (size > 0) {
    const std::string encoded = EncodeBase64(data, size);
    if (qvl::Base64DecodedSize(encoded) != size) std::abort();
    if (qvl::DecodeBase64(encoded, "fuzz") != std::vector<uint8_t>(data, data + size)) std::abort();
  }

  static const qvl::MediaPolicy policy = [] {
    qvl::MediaPolicy p;
    p.max_image_bytes = 4096;
    return p;
  }();
  try {
    const std::vector<uint8_t> bytes = qvl::LoadImageBytes(text, policy, "fuzz");
    if (bytes.empty() || static_cast<int64_t>(bytes.size()) > policy.max_image_bytes) std::abort();
  } catch (const qvl::FieldError&) {
  }
  try {
    qvl::LoadImageBytes("data:image/png;base64," + std::string(text), policy, "fuzz");
  } catch (const qvl::FieldError&) {
  }
  return 0;
}
