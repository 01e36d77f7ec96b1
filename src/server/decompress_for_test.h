// Decompresses what the server sends compressed, for tests that compare it with the
// original bytes.
#pragma once

#include <brotli/decode.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace qvl {

// The bytes of one whole gzip stream; throws when `gz` is not exactly one.
inline std::string GunzipForTest(std::string_view gz) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buffer[1 << 14];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!whole) throw std::runtime_error("not one whole gzip stream");
  return out;
}

// The bytes of one whole Brotli stream; throws when `br` is not exactly one.
inline std::string UnbrotliForTest(std::string_view br) {
  BrotliDecoderState* state = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (state == nullptr) throw std::runtime_error("BrotliDecoderCreateInstance failed");
  size_t available_in = br.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(br.data());
  std::string out;
  BrotliDecoderResult result = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
  while (result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    uint8_t buffer[1 << 14];
    size_t available_out = sizeof(buffer);
    uint8_t* next_out = buffer;
    result = BrotliDecoderDecompressStream(state, &available_in, &next_in, &available_out,
                                           &next_out, nullptr);
    out.append(reinterpret_cast<const char*>(buffer), sizeof(buffer) - available_out);
  }
  BrotliDecoderDestroyInstance(state);
  if (result != BROTLI_DECODER_RESULT_SUCCESS || available_in != 0) {
    throw std::runtime_error("not one whole Brotli stream");
  }
  return out;
}

}  // namespace qvl
