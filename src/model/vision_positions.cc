#include "model/vision_positions.h"

#include <cmath>
#include <cstring>

#include "base/bf16.h"
#include "base/error.h"

namespace qvl {
namespace {

// torch.linspace(0, end, steps) in float32: start + i * step for the first half and
// end - (steps - 1 - i) * step for the second, as torch computes it.
std::vector<float> Linspace(float end, int64_t steps) {
  std::vector<float> v(steps);
  if (steps == 1) {
    v[0] = 0.0f;
    return v;
  }
  const float step = end / static_cast<float>(steps - 1);
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    v[i] = i < half ? static_cast<float>(i) * step : end - static_cast<float>(steps - 1 - i) * step;
  }
  return v;
}

float TableValue(const WeightView& table, int64_t row, int64_t col) {
  const int64_t i = row * table.cols + col;
  switch (table.dtype) {
    case DType::kF32:
      return static_cast<const float*>(table.data)[i];
    case DType::kBF16:
      return Bf16ToF32(static_cast<const uint16_t*>(table.data)[i]);
    case DType::kF16:
      return F16ToF32(static_cast<const uint16_t*>(table.data)[i]);
    default:
      Fail(ErrorCode::kInternal, "position embedding table has dtype ", DTypeName(table.dtype));
  }
}

// Calls fn(index_in_block_order, patch_row, patch_col) for one frame of an (h, w) grid.
template <typename Fn>
void ForEachPatchInBlockOrder(int64_t h, int64_t w, int merge, Fn fn) {
  int64_t index = 0;
  for (int64_t by = 0; by < h / merge; ++by)
    for (int64_t bx = 0; bx < w / merge; ++bx)
      for (int iy = 0; iy < merge; ++iy)
        for (int ix = 0; ix < merge; ++ix) fn(index++, by * merge + iy, bx * merge + ix);
}

}  // namespace

void InterpolatePositionEmbedding(const WeightView& table, std::span<const GridThw> grids,
                                  int merge, float* out) {
  const int64_t g = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(table.rows))));
  const int64_t dim = table.cols;
  std::vector<float> corner(4 * dim);
  for (const GridThw& grid : grids) {
    const std::vector<float> hy = Linspace(static_cast<float>(g - 1), grid.h);
    const std::vector<float> hx = Linspace(static_cast<float>(g - 1), grid.w);
    float* frame = out;
    ForEachPatchInBlockOrder(grid.h, grid.w, merge, [&](int64_t index, int64_t r, int64_t c) {
      const int64_t y0 = static_cast<int64_t>(std::floor(hy[r]));
      const int64_t x0 = static_cast<int64_t>(std::floor(hx[c]));
      const int64_t y1 = std::min(y0 + 1, g - 1);
      const int64_t x1 = std::min(x0 + 1, g - 1);
      const float dy = hy[r] - static_cast<float>(y0);
      const float dx = hx[c] - static_cast<float>(x0);
      const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx;
      const float w10 = dy * (1 - dx), w11 = dy * dx;
      float* dst = frame + index * dim;
      for (int64_t d = 0; d < dim; ++d) {
        // Summed in the reference's order: the four weighted corners left to right.
        float v = TableValue(table, y0 * g + x0, d) * w00;
        v += TableValue(table, y0 * g + x1, d) * w01;
        v += TableValue(table, y1 * g + x0, d) * w10;
        v += TableValue(table, y1 * g + x1, d) * w11;
        dst[d] = v;
      }
    });
    const int64_t frame_size = grid.h * grid.w * dim;
    for (int64_t t = 1; t < grid.t; ++t) std::memcpy(frame + t * frame_size, frame, frame_size * 4);
    out += grid.t * frame_size;
  }
}

void VisionRotaryTables(std::span<const GridThw> grids, int merge, int head_dim,
                        std::vector<float>* cos, std::vector<float>* sin) {
  const int half = head_dim / 2;
  const int quarter = head_dim / 4;
  std::vector<float> inv_freq(quarter);
  for (int j = 0; j < quarter; ++j) {
    inv_freq[j] = 1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / static_cast<float>(half));
  }
  int64_t total = 0;
  for (const GridThw& grid : grids) total += grid.patches();
  cos->resize(total * half);
  sin->resize(total * half);
  int64_t base = 0;
  for (const GridThw& grid : grids) {
    for (int64_t t = 0; t < grid.t; ++t) {
      ForEachPatchInBlockOrder(grid.h, grid.w, merge, [&](int64_t index, int64_t r, int64_t c) {
        float* cr = cos->data() + (base + index) * half;
        float* sr = sin->data() + (base + index) * half;
        for (int j = 0; j < quarter; ++j) {
          const float ar = static_cast<float>(r) * inv_freq[j];
          const float ac = static_cast<float>(c) * inv_freq[j];
          cr[j] = std::cos(ar);
          sr[j] = std::sin(ar);
          cr[quarter + j] = std::cos(ac);
          sr[quarter + j] = std::sin(ac);
        }
      });
      base += grid.h * grid.w;
    }
  }
}

}  // namespace qvl
