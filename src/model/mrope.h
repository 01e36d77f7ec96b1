// Multimodal rotary positions of the text decoder (M-RoPE). Mirrors transformers'
// Qwen3VLModel.get_rope_index and Qwen3VLTextRotaryEmbedding (interleaved sections).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "model/config.h"
#include "model/image_grid.h"

namespace qvl {

// Positions of a token run, three rows (temporal, height, width), built incrementally as
// a conversation grows, so a follow-up turn continues where the cache ended.
class MropePositions {
 public:
  // Text tokens: all three rows = next, next+1, ...
  void AppendText(int64_t n);
  // One image's pad tokens, raster order over the merged (gh, gw) grid: (s, s+row, s+col);
  // afterwards text continues at s + max(gh, gw).
  void AppendImage(int64_t gh, int64_t gw);

  int64_t size() const { return static_cast<int64_t>(rows_[0].size()); }
  const std::vector<int32_t>& row(int r) const { return rows_[r]; }
  // Position of the next token (max of all so far + 1).
  int64_t next() const { return next_; }
  // rope_delta of the reference: next() - size().
  int64_t rope_delta() const { return next_ - size(); }
  void Truncate(int64_t n);

 private:
  std::array<std::vector<int32_t>, 3> rows_;
  int64_t next_ = 0;
};

// Positions for a whole prompt: image pad runs (image_token_id) must match `grids` in
// order and length (t * h/merge * w/merge tokens each). A video is t temporal groups,
// each its own run of video_token_id pads (timestamp text in between) placed like an
// image of grid (1, h, w): runs match the groups of `video_grids` in order (fixtures
// README 7.7). Throws Error(kInvalidArgument) when runs and grids differ.
MropePositions ComputeMropePositions(std::span<const int32_t> ids, int32_t image_token_id,
                                     std::span<const GridThw> grids, int merge,
                                     int32_t video_token_id = -1,
                                     std::span<const GridThw> video_grids = {});

// cos/sin tables [n, head_dim/2] for tokens whose positions are (t[i], h[i], w[i]): with
// inv_freq[j] = theta^(-2j/head_dim), frequency j uses the height position when
// j % 3 == 1 and j < 3*sections[1], the width position when j % 3 == 2 and
// j < 3*sections[2], else the temporal one (interleaved M-RoPE).
class MropeTables {
 public:
  explicit MropeTables(const TextConfig& config);
  void Compute(const int32_t* t, const int32_t* h, const int32_t* w, int64_t n, float* cos,
               float* sin) const;
  int half() const { return static_cast<int>(inv_freq_.size()); }

 private:
  std::vector<float> inv_freq_;
  std::vector<uint8_t> axis_;  // 0 temporal, 1 height, 2 width, per frequency
};

}  // namespace qvl
