// Compresses one file of the built web page for embedding (embed_assets.cmake), once at
// build time so that the server never spends CPU on it:
//   qvl_compress_asset IN OUT.gz OUT.br
// gzip at zlib's level 9 for every browser, Brotli at quality 11 for those that take it
// (on https and on localhost). Both outputs depend on the input alone.
#include <brotli/encode.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

bool Gzip(const std::string& in, std::string* out) {
  z_stream z{};
  // 16 + 15 window bits: a gzip wrapper, with no name and time 0 in its header.
  if (deflateInit2(&z, 9, Z_DEFLATED, 16 + 15, 9, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out->resize(deflateBound(&z, in.size()) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out->size());
  const bool done = deflate(&z, Z_FINISH) == Z_STREAM_END;
  out->resize(z.total_out);
  deflateEnd(&z);
  return done;
}

bool Brotli(const std::string& in, std::string* out) {
  size_t size = BrotliEncoderMaxCompressedSize(in.size());
  if (size == 0) return false;
  out->resize(size);
  if (!BrotliEncoderCompress(BROTLI_MAX_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, in.size(),
                             reinterpret_cast<const uint8_t*>(in.data()), &size,
                             reinterpret_cast<uint8_t*>(out->data()))) {
    return false;
  }
  out->resize(size);
  return true;
}

bool Write(const char* path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IN OUT.gz OUT.br\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
    return 1;
  }
  const std::string in{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  std::string gz;
  std::string br;
  if (!Gzip(in, &gz) || !Brotli(in, &br)) {
    std::fprintf(stderr, "%s: cannot compress %s\n", argv[0], argv[1]);
    return 1;
  }
  if (!Write(argv[2], gz) || !Write(argv[3], br)) {
    std::fprintf(stderr, "%s: cannot write %s or %s\n", argv[0], argv[2], argv[3]);
    return 1;
  }
  return 0;
}
