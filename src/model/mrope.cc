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
                                     std::span<const GridThw> grids, int merge) {
  MropePositions pos;
  size_t image = 0;
  int64_t i = 0;
  const int64_t n = static_cast<int64_t>(ids.size());
  while (i < n) {
    int64_t j = i;
    if (ids[i] != image_token_id) {
      while (j < n && ids[j] != image_token_id) ++j;
      pos.AppendText(j - i);
      i = j;
      continue;
    }
    if (image >= grids.size()) {
      Fail(ErrorCode::kInvalidArgument, "prompt has more image token runs than images (",
           grids.size(), ")");
    }
    const GridThw& g = grids[image++];
    const int64_t expected = g.tokens(merge);
    while (j < n && ids[j] == image_token_id && j - i < expected) ++j;
    if (j - i != expected) {
      Fail(ErrorCode::kInvalidArgument, "image ", image, " has ", j - i,
           " pad tokens in the prompt, its grid needs ", expected);
    }
    for (int64_t t = 0; t < g.t; ++t) pos.AppendImage(g.h / merge, g.w / merge);
    i = j;
  }
  if (image != grids.size()) {
    Fail(ErrorCode::kInvalidArgument, "prompt has ", image, " image token runs but ",
         grids.size(), " images");
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
