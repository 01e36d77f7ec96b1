#include "engine/content_hash.h"

#include <openssl/evp.h>

#include <cstring>

#include "base/error.h"

namespace qvl {

struct ContentHasher::State {
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1) {
    Fail(ErrorCode::kInternal, "SHA-256 failed");
  }
}

ContentHasher::~ContentHasher() = default;

void ContentHasher::Update(std::span<const uint8_t> bytes) {
  if (EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()) != 1) {
    Fail(ErrorCode::kInternal, "SHA-256 failed");
  }
}

uint64_t ContentHasher::Finish() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(state_->ctx, digest, &size) != 1) {
    Fail(ErrorCode::kInternal, "SHA-256 failed");
  }
  uint64_t h;
  std::memcpy(&h, digest, sizeof(h));
  return h;
}

uint64_t ContentHash(std::span<const uint8_t> bytes) {
  ContentHasher hasher;
  hasher.Update(bytes);
  return hasher.Finish();
}

}  // namespace qvl
