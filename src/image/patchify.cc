#include "image/patchify.h"

#include <cstring>

#include "image/patchify_kernels.h"
#include "image/simd_dispatch.h"

namespace qvl {

NormalizationTable MakeNormalizationTable(const ImageProcessorParams& params) {
  NormalizationTable n;
  n.rescale = params.do_rescale;
  n.rescale_factor = params.rescale_factor;
  n.normalize = params.do_normalize;
  n.mean = params.image_mean;
  n.std = params.image_std;
  for (int c = 0; c < 3; ++c) {
    for (int u = 0; u < 256; ++u) {
      float v = n.rescale ? static_cast<float>(u * n.rescale_factor) : static_cast<float>(u);
      if (n.normalize) v = (v - n.mean[c]) / n.std[c];
      n.table[c][u] = v;
    }
  }
  return n;
}

namespace patchify {

void PatchifyScalar(const RgbxImage& image, const NormalizationTable& table,
                    const PatchLayout& layout, float* out) {
  const int p = layout.patch_size, m = layout.merge_size, t = layout.temporal_patch_size;
  const int grid_h = image.height() / p, grid_w = image.width() / p;
  const size_t plane = static_cast<size_t>(p) * p;
  float* row = out;
  for (int by = 0; by < grid_h / m; ++by) {
    for (int bx = 0; bx < grid_w / m; ++bx) {
      for (int iy = 0; iy < m; ++iy) {
        for (int ix = 0; ix < m; ++ix) {
          const int py = by * m + iy, px = bx * m + ix;
          for (int c = 0; c < 3; ++c) {
            float* frame0 = row + c * t * plane;
            const std::array<float, 256>& values = table.table[c];
            for (int y = 0; y < p; ++y) {
              const uint8_t* src = image.row(py * p + y) + static_cast<size_t>(px) * p * 4 + c;
              float* dst = frame0 + static_cast<size_t>(y) * p;
              for (int x = 0; x < p; ++x) dst[x] = values[src[4 * x]];
            }
            for (int f = 1; f < t; ++f)
              std::memcpy(frame0 + f * plane, frame0, plane * sizeof(float));
          }
          row += 3 * t * plane;
        }
      }
    }
  }
}

}  // namespace patchify

void Patchify(const RgbxImage& image, const NormalizationTable& table, const PatchLayout& layout,
              float* out) {
#if defined(__x86_64__)
  if (layout.patch_size % 8 == 0 && ImageKernelsUseAvx2()) {
    patchify::PatchifyAvx2(image, table, layout, out);
    return;
  }
#endif
  patchify::PatchifyScalar(image, table, layout, out);
}

}  // namespace qvl
