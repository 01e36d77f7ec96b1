#include "share/model_identity.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/cpu_features.h"
#include "base/error.h"

namespace qvl {
namespace {

constexpr int kSamples = 16;
constexpr size_t kSampleBytes = 4096;
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

struct Digest {
  Digest() : ctx(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~Digest() { EVP_MD_CTX_free(ctx); }
  void Add(const void* data, size_t n) { EVP_DigestUpdate(ctx, data, n); }
  void Add(const std::string& s) { Add(s.data(), s.size() + 1); }  // with the NUL: unambiguous
  EVP_MD_CTX* ctx;
};

class File {
 public:
  explicit File(const std::string& path) : path_(path), fd_(open(path.c_str(), O_RDONLY)) {
    if (fd_ < 0) Fail(ErrorCode::kIo, "cannot open ", path, " to fingerprint the model");
  }
  ~File() { close(fd_); }
  // Up to n bytes at `offset`.
  std::vector<char> Read(uint64_t offset, size_t n) const {
    std::vector<char> buf(n);
    const ssize_t got = pread(fd_, buf.data(), n, static_cast<off_t>(offset));
    if (got < 0) Fail(ErrorCode::kIo, "cannot read ", path_, " to fingerprint the model");
    buf.resize(static_cast<size_t>(got));
    return buf;
  }

 private:
  std::string path_;
  int fd_;
};

void AddFile(Digest& d, const std::string& path) {
  const File f(path);
  const uint64_t size = std::filesystem::file_size(path);
  d.Add(&size, sizeof(size));
  const std::vector<char> all = f.Read(0, static_cast<size_t>(std::min<uint64_t>(size, 1 << 20)));
  d.Add(all.data(), all.size());
}

void AddWeightFile(Digest& d, const std::string& path) {
  const File f(path);
  const uint64_t size = std::filesystem::file_size(path);
  d.Add(std::filesystem::path(path).filename().string());
  d.Add(&size, sizeof(size));
  const std::vector<char> prefix = f.Read(0, 8);
  uint64_t header = 0;
  if (prefix.size() == 8) std::memcpy(&header, prefix.data(), 8);
  const std::vector<char> head =
      f.Read(0, static_cast<size_t>(
                    std::min<uint64_t>(8 + std::min<uint64_t>(header, kMaxHeaderBytes), size)));
  d.Add(head.data(), head.size());
  const uint64_t data_start = head.size();
  if (size <= data_start) return;
  const uint64_t span = size - data_start;
  for (int i = 0; i < kSamples; ++i) {
    const uint64_t at = data_start + span / kSamples * i;
    const std::vector<char> sample = f.Read(at, kSampleBytes);
    d.Add(sample.data(), sample.size());
  }
}

}  // namespace

std::string ModelNumerics(const Qwen3VLModel& model) {
  const ModelOptions& o = model.options();
  const CpuFeatures& cpu = GetCpuFeatures();
  return StrCat("v=", WeightFormatName(o.vision_weights), ",t=", WeightFormatName(o.text_weights),
                ",p=", o.precision == MatmulPrecision::kBF16 ? "bf16" : "f32",
                ",kv=", DTypeName(o.kv_dtype), ",cpu=", CpuTierName(ActiveTier()),
                ",amx=", cpu.amx_bf16 || cpu.amx_int8 ? 1 : 0);
}

std::string ModelIdentity(const Qwen3VLModel& model) {
  Digest d;
  const ModelFolder& folder = model.folder();
  AddFile(d, folder.config_path);
  AddFile(d, folder.preprocessor_config_path);
  // What turns a request into tokens and tokens into text: an answer shared between
  // replicas must come from the same ones.
  for (const std::string* path :
       {&folder.tokenizer_path, &folder.tokenizer_config_path, &folder.chat_template_path}) {
    if (!path->empty()) AddFile(d, *path);
  }
  for (const std::string& w : folder.weight_files) AddWeightFile(d, w);
  d.Add(ModelNumerics(model));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(d.ctx, digest, &n);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace qvl
