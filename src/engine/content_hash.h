// Content identities for vision inputs: the first 64 bits of a SHA-256, which another
// request cannot forge, so cached encodings and KV pages are only ever reused for the
// same image or video.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace qvl {

uint64_t ContentHash(std::span<const uint8_t> bytes);

// The same over several pieces (a video's frames and how they were sampled).
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  void Update(std::span<const uint8_t> bytes);
  template <typename T>
  void UpdateValue(const T& value) {
    Update({reinterpret_cast<const uint8_t*>(&value), sizeof(value)});
  }
  uint64_t Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace qvl
