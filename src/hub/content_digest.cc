#include "hub/content_digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace qvl::hub {
namespace {

bool IsHex(const std::string& text) {
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

DigestKind DigestKindOfEtag(const std::string& etag) {
  if (etag.size() == 64 && IsHex(etag)) return DigestKind::kSha256;
  if (etag.size() == 40 && IsHex(etag)) return DigestKind::kGitBlobSha1;
  return DigestKind::kNone;
}

bool DigestMatchesEtag(const std::string& digest, const std::string& etag) {
  return digest.size() == etag.size() &&
         std::equal(digest.begin(), digest.end(), etag.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

const char* DigestKindName(DigestKind kind) {
  switch (kind) {
    case DigestKind::kSha256:
      return "sha256";
    case DigestKind::kGitBlobSha1:
      return "git blob sha1";
    case DigestKind::kNone:
      return "none";
  }
  return "none";
}

ContentDigest::ContentDigest(DigestKind kind, uint64_t total_size) : kind_(kind) {
  if (kind_ == DigestKind::kNone) return;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const EVP_MD* md = kind_ == DigestKind::kSha256 ? EVP_sha256() : EVP_sha1();
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, md, nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    Fail(ErrorCode::kInternal, "OpenSSL cannot compute ", DigestKindName(kind_));
  }
  ctx_ = ctx;
  if (kind_ == DigestKind::kGitBlobSha1) {
    const std::string header = StrCat("blob ", total_size);
    Update(header.data(), header.size() + 1);  // the header ends with its NUL
  }
}

ContentDigest::~ContentDigest() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void ContentDigest::Update(const void* data, size_t size) {
  if (ctx_ != nullptr) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}

std::string ContentDigest::HexDigest() {
  if (ctx_ == nullptr) return std::string();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &length);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string DigestOf(DigestKind kind, std::string_view data) {
  ContentDigest digest(kind, data.size());
  digest.Update(data.data(), data.size());
  return digest.HexDigest();
}

std::string DigestOfFile(DigestKind kind, const std::string& path, uint64_t size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail(ErrorCode::kIo, "cannot read ", path, ": ", std::strerror(errno));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  ContentDigest digest(kind, size);
  std::vector<char> buffer(4u << 20);
  uint64_t left = size;
  while (left > 0) {
    const ssize_t got = read(fd, buffer.data(), std::min<uint64_t>(left, buffer.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int err = got < 0 ? errno : 0;
      close(fd);
      Fail(ErrorCode::kIo, "cannot read ", path, ": ",
           err != 0 ? std::strerror(err) : "file is shorter than expected");
    }
    digest.Update(buffer.data(), static_cast<size_t>(got));
    left -= static_cast<uint64_t>(got);
  }
  close(fd);
  return digest.HexDigest();
}

}  // namespace qvl::hub
