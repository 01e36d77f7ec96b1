// The two passes of the bicubic resampler, as a scalar reference and an AVX2 twin
// (internal to image/; bicubic_resize.cc chooses, the tests compare them). Pixels are
// 4 bytes; all 4 channels are filtered the same way. Inputs must have
// RgbxImage::kPadding readable bytes after their last pixel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "image/bicubic_resize.h"

namespace qvl::resample {

// Each of `rows` rows: in_size pixels -> axis.out_size pixels.
void HorizontalScalar(const uint8_t* in, size_t in_stride, int rows, const ResampleAxis& axis,
                      uint8_t* out, size_t out_stride);
// axis.in_size rows -> axis.out_size rows, each `row_bytes` bytes wide.
void VerticalScalar(const uint8_t* in, size_t in_stride, size_t row_bytes, const ResampleAxis& axis,
                    uint8_t* out, size_t out_stride);

#if defined(__x86_64__)
void HorizontalAvx2(const uint8_t* in, size_t in_stride, int rows, const ResampleAxis& axis,
                    uint8_t* out, size_t out_stride);
void VerticalAvx2(const uint8_t* in, size_t in_stride, size_t row_bytes, const ResampleAxis& axis,
                  uint8_t* out, size_t out_stride);
#endif

}  // namespace qvl::resample
