#include "image/patchify.h"

#include <cstring>
#include <vector>

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

void PatchifyScalar(const RgbxImage* const* frames, const NormalizationTable& table,
                    const PatchLayout& layout, float* out) {
  const int p = layout.patch_size, m = layout.merge_size, t = layout.temporal_patch_size;
  const int grid_h = frames[0]->height() / p, grid_w = frames[0]->width() / p;
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
            for (int f = 0; f < t; ++f) {
              float* dst_plane = frame0 + f * plane;
              if (f > 0 && frames[f] == frames[f - 1]) {
                std::memcpy(dst_plane, dst_plane - plane, plane * sizeof(float));
                continue;
              }
              for (int y = 0; y < p; ++y) {
                const uint8_t* src =
                    frames[f]->row(py * p + y) + static_cast<size_t>(px) * p * 4 + c;
                float* dst = dst_plane + static_cast<size_t>(y) * p;
                for (int x = 0; x < p; ++x) dst[x] = values[src[4 * x]];
              }
            }
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
  std::vector<const RgbxImage*> frames(layout.temporal_patch_size, &image);
  PatchifyFrames(frames.data(), table, layout, out);
}

void PatchifyFrames(const RgbxImage* const* frames, const NormalizationTable& table,
                    const PatchLayout& layout, float* out) {
#if defined(__x86_64__)
  if (layout.patch_size % 8 == 0 && ImageKernelsUseAvx2()) {
    patchify::PatchifyAvx2(frames, table, layout, out);
    return;
  }
#endif
  patchify::PatchifyScalar(frames, table, layout, out);
}

}  // namespace qvl
