#include "image/bicubic_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "image/resample_kernels.h"
#include "image/simd_dispatch.h"

namespace qvl {
namespace {

// Pillow's bicubic_filter with a = -0.5, written in the same operation order so the
// doubles round identically.
double BicubicFilter(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

uint8_t Clip8(int32_t sum) {
  const int32_t v = sum >> kWeightBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

constexpr int32_t kHalf = 1 << (kWeightBits - 1);

}  // namespace

void ComputeBicubicAxis(int in_size, int out_size, ResampleAxis* axis) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 2.0 * filterscale;
  const int max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis->in_size = in_size;
  axis->out_size = out_size;
  axis->taps = (max_taps + 1) & ~1;
  axis->first.resize(out_size);
  axis->count.resize(out_size);
  axis->weights.assign(static_cast<size_t>(out_size) * axis->taps, 0);
  const double inv_filterscale = 1.0 / filterscale;
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    const int first = std::max(0, static_cast<int>(center - support + 0.5));
    const int end = std::min(in_size, static_cast<int>(center + support + 0.5));
    const int count = end - first;
    const auto weight = [&](int j) {
      return BicubicFilter((j + first - center + 0.5) * inv_filterscale);
    };
    double total = 0.0;
    for (int j = 0; j < count; ++j) total += weight(j);
    int32_t* k = &axis->weights[static_cast<size_t>(i) * axis->taps];
    for (int j = 0; j < count; ++j) {
      const double normalized = total != 0.0 ? weight(j) / total : weight(j);
      const double fixed = normalized * (1 << kWeightBits);
      k[j] = static_cast<int32_t>(normalized < 0 ? -0.5 + fixed : 0.5 + fixed);
    }
    axis->first[i] = first;
    axis->count[i] = count;
  }
}

namespace resample {

void HorizontalScalar(const uint8_t* in, size_t in_stride, int rows, const ResampleAxis& axis,
                      uint8_t* out, size_t out_stride) {
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = in + r * in_stride;
    uint8_t* dst = out + r * out_stride;
    for (int i = 0; i < axis.out_size; ++i) {
      const int32_t* k = &axis.weights[static_cast<size_t>(i) * axis.taps];
      const uint8_t* p = src + static_cast<size_t>(axis.first[i]) * 4;
      int32_t s0 = kHalf, s1 = kHalf, s2 = kHalf, s3 = kHalf;
      for (int j = 0; j < axis.count[i]; ++j) {
        s0 += p[4 * j + 0] * k[j];
        s1 += p[4 * j + 1] * k[j];
        s2 += p[4 * j + 2] * k[j];
        s3 += p[4 * j + 3] * k[j];
      }
      dst[4 * i + 0] = Clip8(s0);
      dst[4 * i + 1] = Clip8(s1);
      dst[4 * i + 2] = Clip8(s2);
      dst[4 * i + 3] = Clip8(s3);
    }
  }
}

void VerticalScalar(const uint8_t* in, size_t in_stride, size_t row_bytes, const ResampleAxis& axis,
                    uint8_t* out, size_t out_stride) {
  constexpr size_t kBlock = 256;
  int32_t sums[kBlock];
  for (int i = 0; i < axis.out_size; ++i) {
    const int32_t* k = &axis.weights[static_cast<size_t>(i) * axis.taps];
    const uint8_t* src = in + static_cast<size_t>(axis.first[i]) * in_stride;
    uint8_t* dst = out + i * out_stride;
    for (size_t b0 = 0; b0 < row_bytes; b0 += kBlock) {
      const size_t n = std::min(kBlock, row_bytes - b0);
      std::fill(sums, sums + n, kHalf);
      for (int j = 0; j < axis.count[i]; ++j) {
        const uint8_t* row = src + j * in_stride + b0;
        for (size_t b = 0; b < n; ++b) sums[b] += row[b] * k[j];
      }
      for (size_t b = 0; b < n; ++b) dst[b0 + b] = Clip8(sums[b]);
    }
  }
}

}  // namespace resample

void BicubicResize(const RgbxImage& in, ImageSize size, ResizeScratch* scratch, RgbxImage* out) {
  const bool horizontal = size.width != in.width();
  const bool vertical = size.height != in.height();
  [[maybe_unused]] const bool avx2 = ImageKernelsUseAvx2();
  const RgbxImage* source = &in;
  if (horizontal) {
    ComputeBicubicAxis(in.width(), size.width, &scratch->x_axis);
    RgbxImage* target = vertical ? &scratch->horizontal : out;
    target->Reset(size.width, in.height());
#if defined(__x86_64__)
    if (avx2) {
      resample::HorizontalAvx2(in.data(), in.stride(), in.height(), scratch->x_axis, target->data(),
                               target->stride());
    } else
#endif
    {
      resample::HorizontalScalar(in.data(), in.stride(), in.height(), scratch->x_axis,
                                 target->data(), target->stride());
    }
    source = target;
  }
  if (vertical) {
    ComputeBicubicAxis(in.height(), size.height, &scratch->y_axis);
    out->Reset(size.width, size.height);
#if defined(__x86_64__)
    if (avx2) {
      resample::VerticalAvx2(source->data(), source->stride(), source->stride(), scratch->y_axis,
                             out->data(), out->stride());
    } else
#endif
    {
      resample::VerticalScalar(source->data(), source->stride(), source->stride(), scratch->y_axis,
                               out->data(), out->stride());
    }
  }
  if (!horizontal && !vertical) {
    out->Reset(in.width(), in.height());
    std::memcpy(out->data(), in.data(), in.stride() * in.height());
  }
}

}  // namespace qvl
