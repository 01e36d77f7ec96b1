#include "model/mrope.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace qvl {

void MropePositions::AppendText(int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (auto& r : rows_) r.push_back(static_cast<int32_t>(next_));
    ++next_;
  }
}

void MropePositions::AppendImage(int64_t gh, int64_t gw) {
  const int64_t s = next_;
  for (int64_t r = 0; r < gh; ++r) {
    for (int64_t c = 0; c < gw; ++c) {
      rows_[0].push_back(static_cast<int32_t>(s));
      rows_[1].push_back(static_cast<int32_t>(s + r));
      rows_[2].push_back(static_cast<int32_t>(s + c));
    }
  }
  next_ = s + std::max(gh, gw);
}

void MropePositions::Truncate(int64_t n) {
  if (n >= size()) return;
  for (auto& r : rows_) r.resize(n);
  int64_t mx = -1;
  for (const auto& r : rows_)
    for (int32_t p : r) mx = std::max<int64_t>(mx, p);
  next_ = mx + 1;
}

MropePositions ComputeMropePositions(std::span<const int32_t> ids, int32_t image_token_id,
                                     std::span<const GridThw> grids, int merge,
                                     int32_t video_token_id, std::span<const GridThw> video_grids) {
  MropePositions pos;
  size_t image = 0, video = 0;
  int64_t group = 0;  // temporal group of video `video` that comes next
  int64_t i = 0;
  const int64_t n = static_cast<int64_t>(ids.size());
  auto visual = [&](int32_t id) {
    return id == image_token_id || (video_token_id >= 0 && id == video_token_id);
  };
  while (i < n) {
    int64_t j = i;
    if (!visual(ids[i])) {
      while (j < n && !visual(ids[j])) ++j;
      pos.AppendText(j - i);
      i = j;
      continue;
    }
    const int32_t pad = ids[i];
    const bool is_video = pad != image_token_id;
    if (is_video ? video >= video_grids.size() : image >= grids.size()) {
      Fail(ErrorCode::kInvalidArgument, "prompt has more ", is_video ? "video" : "image",
           " token runs than ", is_video ? "videos (" : "images (",
           is_video ? video_grids.size() : grids.size(), ")");
    }
    const GridThw& g = is_video ? video_grids[video] : grids[image];
    // An image's tokens are one run; each temporal group of a video is one.
    const int64_t expected = is_video ? g.tokens(merge) / g.t : g.tokens(merge);
    while (j < n && ids[j] == pad && j - i < expected) ++j;
    if (j - i != expected) {
      Fail(ErrorCode::kInvalidArgument, is_video ? "video " : "image ",
           (is_video ? video : image) + 1, " has ", j - i, " pad tokens in a run, its grid needs ",
           expected);
    }
    if (is_video) {
      pos.AppendImage(g.h / merge, g.w / merge);
      if (++group == g.t) ++video, group = 0;
    } else {
      for (int64_t t = 0; t < g.t; ++t) pos.AppendImage(g.h / merge, g.w / merge);
      ++image;
    }
    i = j;
  }
  if (image != grids.size()) {
    Fail(ErrorCode::kInvalidArgument, "prompt has ", image, " image token runs but ", grids.size(),
         " images");
  }
  if (video != video_grids.size()) {
    Fail(ErrorCode::kInvalidArgument, "prompt has the token runs of ", video, " videos but ",
         video_grids.size(), " videos");
  }
  return pos;
}

MropeTables::MropeTables(const TextConfig& config) {
  const int half = config.head_dim / 2;
  inv_freq_.resize(half);
  axis_.resize(half);
  const float theta = static_cast<float>(config.rope_theta);
  for (int j = 0; j < half; ++j) {
    inv_freq_[j] =
        1.0f / std::pow(theta, static_cast<float>(2 * j) / static_cast<float>(config.head_dim));
    uint8_t axis = 0;
    if (config.mrope_interleaved) {
      if (j % 3 == 1 && j < 3 * config.mrope_section[1]) axis = 1;
      if (j % 3 == 2 && j < 3 * config.mrope_section[2]) axis = 2;
    } else {
      // Contiguous sections: [temporal | height | width].
      if (j >= config.mrope_section[0]) axis = 1;
      if (j >= config.mrope_section[0] + config.mrope_section[1]) axis = 2;
    }
    axis_[j] = axis;
  }
}

void MropeTables::Compute(const int32_t* t, const int32_t* h, const int32_t* w, int64_t n,
                          float* cos, float* sin) const {
  const int half = static_cast<int>(inv_freq_.size());
  for (int64_t i = 0; i < n; ++i) {
    const float p[3] = {static_cast<float>(t[i]), static_cast<float>(h[i]),
                        static_cast<float>(w[i])};
    for (int j = 0; j < half; ++j) {
      const float angle = p[axis_[j]] * inv_freq_[j];
      cos[i * half + j] = std::cos(angle);
      sin[i * half + j] = std::sin(angle);
    }
  }
}

}  // namespace qvl
