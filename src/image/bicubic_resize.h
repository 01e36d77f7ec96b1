// PIL's Image.resize(size, BICUBIC) for 8-bit RGB, reproduced bit for bit (fixtures
// README 4.3): separable, horizontal pass first, each pass rounding to uint8, weights
// in 22-bit fixed point. A pass whose size does not change is skipped, as in PIL.
#pragma once

#include <cstdint>
#include <vector>

#include "image/image_size.h"
#include "image/rgbx_image.h"

namespace qvl {

// Resampling weights of one axis, in_size -> out_size.
struct ResampleAxis {
  int in_size = 0;
  int out_size = 0;
  // Weights stored per output: the most any output uses, rounded up to even so SIMD
  // code can take inputs two at a time; unused trailing weights are 0.
  int taps = 0;
  std::vector<int32_t> first;    // [out_size] first input index
  std::vector<int32_t> count;    // [out_size] inputs used (first + count <= in_size)
  std::vector<int32_t> weights;  // [out_size * taps] fixed point, 1 << kWeightBits = 1.0
};

constexpr int kWeightBits = 22;

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for the bicubic filter (a = -0.5):
// scale = in/out, filterscale = max(scale, 1), support = 2 * filterscale; output i is
// centred at (i + 0.5) * scale; weights are normalised in double, then rounded half away
// from zero to fixed point. Reuses the vectors' memory.
void ComputeBicubicAxis(int in_size, int out_size, ResampleAxis* axis);

// Memory reused between resizes.
struct ResizeScratch {
  RgbxImage horizontal;  // output of the horizontal pass
  ResampleAxis x_axis;
  ResampleAxis y_axis;
};

// Resizes `in` to `size` into `out` (a different image than `in`). Runs the AVX2
// kernels when qvl::ActiveTier() allows, otherwise the scalar ones; both give
// identical bytes.
void BicubicResize(const RgbxImage& in, ImageSize size, ResizeScratch* scratch, RgbxImage* out);

}  // namespace qvl
