// W8A8: each output row rotated (ops/hadamard.h) and quantized to int8 with one float32
// scale (see ops/weight_format.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "ops/hadamard.h"
#include "ops/weight_format.h"
#include "ops/weight_pack.h"
#include "ops/weight_pack_internal.h"

namespace qvl {

int64_t W8A8RotationBlock(int64_t padded_k) {
  if (padded_k <= 0) return 1;
  return padded_k & -padded_k;
}

namespace {

// One rotated row of kp weights quantized to q in [-127, 127] with one step, returned
// (0 for a row that is zero or not finite, whose codes are all 0).
float QuantizeW8A8Row(const float* w, int64_t kp, int8_t* q) {
  float amax = 0.0f;
  for (int64_t c = 0; c < kp; ++c) amax = std::max(amax, std::fabs(w[c]));
  if (!(amax > 0.0f) || !std::isfinite(amax)) {
    std::fill(q, q + kp, int8_t{0});
    return 0.0f;
  }
  const float scale = amax / 127.0f;
  const float inv = 127.0f / amax;
  for (int64_t c = 0; c < kp; ++c) {
    q[c] = static_cast<int8_t>(pack::RoundToEven(std::clamp(w[c] * inv, -127.0f, 127.0f)));
  }
  return scale;
}

}  // namespace

namespace pack {

void PackW8A8Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst) {
  if (padded_k > kW8A8MaxDepth) {
    Fail(ErrorCode::kInvalidArgument, "w8a8 weights hold at most ", kW8A8MaxDepth,
         " inputs per row, got ", view.cols);
  }
  const int64_t block = W8A8RotationBlock(padded_k);
  // W H / block: the division by a power of two is exact.
  const float unit = 1.0f / static_cast<float>(block);
  float* rows = ReadPanel(view, panel, padded_k);
  std::vector<int8_t> q(padded_k);
  float* scales = reinterpret_cast<float*>(dst + padded_k * kPanelRows);
  for (int64_t r = 0; r < kPanelRows; ++r) {
    float* row = rows + r * padded_k;
    HadamardBlocks(row, padded_k, block);
    for (int64_t k = 0; k < padded_k; ++k) row[k] *= unit;
    scales[r] = QuantizeW8A8Row(row, padded_k, q.data());
    for (int64_t k = 0; k < padded_k; ++k) {
      dst[W8A8CodeOffset(k, r)] = static_cast<uint8_t>(q[k] + 128);
    }
  }
}

void UnpackW8A8Row(const uint8_t* panel, int64_t r, int64_t cols, int64_t kp, float* out) {
  const float scale = reinterpret_cast<const float*>(panel + kp * kPanelRows)[r];
  std::vector<float> row(kp);
  for (int64_t k = 0; k < kp; ++k) {
    row[k] = scale * static_cast<float>(panel[W8A8CodeOffset(k, r)] - 128);
  }
  // w' H = w when w' = w H / block (H H = block * I): the rotation undone.
  HadamardBlocks(row.data(), kp, W8A8RotationBlock(kp));
  std::copy(row.begin(), row.begin() + cols, out);
}

}  // namespace pack
}  // namespace qvl
