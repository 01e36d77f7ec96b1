#include "engine/media_memo.h"

#include "engine/content_hash.h"

namespace qvl {

uint64_t ImageMemoKey(uint64_t content_hash, const ImageBudget& budget) {
  ContentHasher hasher;
  hasher.UpdateValue('i');
  hasher.UpdateValue(content_hash);
  hasher.UpdateValue(budget.min_pixels);
  hasher.UpdateValue(budget.max_pixels);
  return hasher.Finish();
}

uint64_t VideoMemoKey(uint64_t bytes_hash, const VideoInput& input, const VideoBudget& budget) {
  ContentHasher hasher;
  hasher.UpdateValue('v');
  hasher.UpdateValue(bytes_hash);
  hasher.UpdateValue(input.fps);
  hasher.UpdateValue(input.sample_fps);
  for (const int64_t value :
       {input.min_frames, input.max_frames, input.num_frames, budget.min_pixels, budget.max_pixels,
        budget.min_frame_pixels, budget.max_frame_pixels, budget.min_tokens, budget.max_tokens,
        budget.default_min_tokens, budget.default_max_tokens, budget.limit_tokens}) {
    hasher.UpdateValue(value);
  }
  return hasher.Finish();
}

std::optional<PreparedMedia> MediaMemo::Find(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->media;
}

void MediaMemo::Insert(uint64_t key, const PreparedImage& visual, const VideoPromptLayout& layout) {
  if (max_entries_ == 0) return;
  PreparedMedia media;
  media.visual.grid = visual.grid;
  media.visual.info = visual.info;
  media.visual.content_hash = visual.content_hash;
  media.layout = layout;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second->media = std::move(media);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (lru_.size() >= max_entries_) {
    entries_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front({key, std::move(media)});
  entries_[key] = lru_.begin();
}

}  // namespace qvl
