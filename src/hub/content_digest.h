// Checksums the hub publishes as ETags: sha256 of the content for LFS files, and the git
// blob id (sha1 of "blob <size>\0" + content) for files stored in git itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qvl::hub {

enum class DigestKind {
  kSha256,       // 64 hex digits
  kGitBlobSha1,  // 40 hex digits
  kNone,         // any other ETag: only the size can be checked
};

// Hex digits in either case: mirrors and proxies rewrite ETags in upper case.
DigestKind DigestKindOfEtag(const std::string& etag);

// `digest` (lowercase hex) is the one `etag` publishes, whatever the ETag's case.
bool DigestMatchesEtag(const std::string& digest, const std::string& etag);
const char* DigestKindName(DigestKind kind);

// Incremental digest of `total_size` bytes (the git blob header needs the size up front).
class ContentDigest {
 public:
  ContentDigest(DigestKind kind, uint64_t total_size);
  ~ContentDigest();
  ContentDigest(const ContentDigest&) = delete;
  ContentDigest& operator=(const ContentDigest&) = delete;

  void Update(const void* data, size_t size);
  // Lowercase hex; "" for kNone.
  std::string HexDigest();

 private:
  DigestKind kind_;
  void* ctx_ = nullptr;
};

// Digest of `data` as the hub would publish it for a file of that content.
std::string DigestOf(DigestKind kind, std::string_view data);

// Digest of the first `size` bytes of the file at `path`; throws kIo when unreadable.
std::string DigestOfFile(DigestKind kind, const std::string& path, uint64_t size);

}  // namespace qvl::hub
