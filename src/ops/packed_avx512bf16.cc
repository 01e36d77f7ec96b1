// Packed bf16 kernel for AVX512-BF16 (Zen 4, Sapphire Rapids): vdpbf16ps on bf16 pairs.
// The tier's int8 formats run the AVX512-VNNI kernels (packed_avx512vnni.cc).
#include <immintrin.h>

#include <cstdint>

#include "ops/packed_avx512.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"

namespace qvl::kernels {
namespace {

constexpr int kBf16Rows = 6, kBf16Panels = 4;

// ---- bf16 ------------------------------------------------------------------------------

template <int MR, int NP>
void Bf16Tile(const uint16_t* x, int64_t i0, const PanelRange& r, int64_t p0) {
  __m512 acc[MR][NP];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p] = _mm512_setzero_ps();
  const uint8_t* w[NP];
  for (int p = 0; p < NP; ++p) w[p] = r.w + (p0 + p) * r.panel_bytes;
  const uint16_t* xr = x + i0 * r.kp;
  for (int64_t t = 0; t < r.kp / 2; ++t) {
    __m512i wv[NP];
    for (int p = 0; p < NP; ++p) wv[p] = _mm512_load_si512(w[p] + t * 64);
    for (int i = 0; i < MR; ++i) {
      const __m512i xb = _mm512_set1_epi32(Load32(xr + i * r.kp + 2 * t));
      for (int p = 0; p < NP; ++p) {
        acc[i][p] = _mm512_dpbf16_ps(acc[i][p], (__m512bh)xb, (__m512bh)wv[p]);
      }
    }
  }
  StoreTile<MR, NP>(acc, r, i0, p0);
}

template <int MR>
void Bf16Stream(const uint16_t* x, const PanelRange& r) {
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint8_t* w = r.w + p * r.panel_bytes;
    __m512 acc[MR][1];
    for (int i = 0; i < MR; ++i) acc[i][0] = _mm512_setzero_ps();
    for (int64_t t = 0; t < r.kp / 2; ++t) {
      PrefetchLines(w + t * 64, 64);
      const __m512i wv = _mm512_load_si512(w + t * 64);
      for (int i = 0; i < MR; ++i) {
        const __m512i xb = _mm512_set1_epi32(Load32(x + i * r.kp + 2 * t));
        acc[i][0] = _mm512_dpbf16_ps(acc[i][0], (__m512bh)xb, (__m512bh)wv);
      }
    }
    StoreTile<MR, 1>(acc, r, 0, p);
  }
}

void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  if (m <= kStreamRows) {
    WithRows<kStreamRows>(m, [&]<int R>() { Bf16Stream<R>(x, r); });
    return;
  }
  ForTiles<kBf16Rows, kBf16Panels>(
      m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P>(x, i, r, p); });
}

}  // namespace

PackedKernels Avx512Bf16PackedKernels() {
  PackedKernels k = Avx512VnniPackedKernels();
  k.bf16 = PackedBf16;
  k.bf16_rows = kBf16Rows;
  return k;
}

}  // namespace qvl::kernels
