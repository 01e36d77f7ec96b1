// What preparing an image or a video gave, kept under a key of its bytes and of every
// request field that shaped its preprocessing, so that a follow-up about it is not
// decoded again while the engine still holds its encoding: a two-minute 1080p clip takes
// about 16 s to decode on two cores, and the page sends it again with every question.
// The pixels are not kept: they are only the vision tower's input, and a medium is
// recalled only together with its encoding.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "engine/prepared_request.h"
#include "engine/request.h"
#include "image/image_budget.h"
#include "image/video_budget.h"
#include "text/chat_template.h"

namespace qvl {

struct PreparedMedia {
  PreparedImage visual;      // pixels empty; content hash, grid and what the client is told
  VideoPromptLayout layout;  // a video's; empty for an image
};

// The key of an image: its ContentHash and the budget it was resized to.
uint64_t ImageMemoKey(uint64_t content_hash, const ImageBudget& budget);
// The key of a video: its VideoBytesHash, its frames' rate, its own sampling fields and
// its budget. The server's settings are the preparer's, fixed for the memo's life.
uint64_t VideoMemoKey(uint64_t bytes_hash, const VideoInput& input, const VideoBudget& budget);

// Entries are a few hundred bytes (a video's timestamps); the encodings they lead to are
// what the image cache bounds.
inline constexpr size_t kMediaMemoEntries = 1024;

// Thread-safe; the least recently used entry goes first.
class MediaMemo {
 public:
  explicit MediaMemo(size_t max_entries) : max_entries_(max_entries) {}

  std::optional<PreparedMedia> Find(uint64_t key);
  // Keeps all of `visual` but its pixels.
  void Insert(uint64_t key, const PreparedImage& visual, const VideoPromptLayout& layout);

 private:
  struct Entry {
    uint64_t key;
    PreparedMedia media;
  };

  std::mutex mu_;
  size_t max_entries_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> entries_;
};

}  // namespace qvl
