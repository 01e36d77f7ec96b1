// AVX2 twins of the resampler passes (compiled with -mavx2 -mfma; called only when
// the CPU has AVX2). Products pixel * weight need 31 bits, so the kernels multiply in
// 32-bit lanes; integer sums are exact, which makes the result identical to the scalar
// passes whatever the summation order.
#include <immintrin.h>

#include <cstring>

#include "image/resample_kernels.h"

namespace qvl::resample {
namespace {

constexpr int32_t kHalf = 1 << (kWeightBits - 1);

__m128i LoadLow64(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }

// Two adjacent pixels (8 bytes) widened to 8 int32 lanes.
__m256i TwoPixels(const uint8_t* p) { return _mm256_cvtepu8_epi32(LoadLow64(p)); }

// Sum of the two pixel halves -> rounded, clipped 4 bytes.
uint32_t FinishPixel(__m256i sum) {
  __m128i v = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  v = _mm_srai_epi32(_mm_add_epi32(v, _mm_set1_epi32(kHalf)), kWeightBits);
  v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
  return static_cast<uint32_t>(_mm_cvtsi128_si32(v));
}

void StorePixel(uint8_t* dst, uint32_t pixel) { std::memcpy(dst, &pixel, 4); }

}  // namespace

void HorizontalAvx2(const uint8_t* in, size_t in_stride, int rows, const ResampleAxis& axis,
                    uint8_t* out, size_t out_stride) {
  // Lanes 0-3 take the weight of the first pixel of a pair, lanes 4-7 the second.
  const __m256i spread = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  int r = 0;
  // Four rows at a time share each weight vector.
  for (; r + 4 <= rows; r += 4) {
    const uint8_t* s0 = in + r * in_stride;
    const uint8_t* s1 = s0 + in_stride;
    const uint8_t* s2 = s1 + in_stride;
    const uint8_t* s3 = s2 + in_stride;
    uint8_t* d0 = out + r * out_stride;
    for (int i = 0; i < axis.out_size; ++i) {
      const int32_t* k = &axis.weights[static_cast<size_t>(i) * axis.taps];
      const size_t base = static_cast<size_t>(axis.first[i]) * 4;
      const int n = (axis.count[i] + 1) & ~1;
      __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
      for (int j = 0; j < n; j += 2) {
        const __m256i w =
            _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(LoadLow64(k + j)), spread);
        const size_t at = base + 4 * static_cast<size_t>(j);
        a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(TwoPixels(s0 + at), w));
        a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(TwoPixels(s1 + at), w));
        a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(TwoPixels(s2 + at), w));
        a3 = _mm256_add_epi32(a3, _mm256_mullo_epi32(TwoPixels(s3 + at), w));
      }
      StorePixel(d0 + 4 * i, FinishPixel(a0));
      StorePixel(d0 + out_stride + 4 * i, FinishPixel(a1));
      StorePixel(d0 + 2 * out_stride + 4 * i, FinishPixel(a2));
      StorePixel(d0 + 3 * out_stride + 4 * i, FinishPixel(a3));
    }
  }
  for (; r < rows; ++r) {
    const uint8_t* s = in + r * in_stride;
    uint8_t* d = out + r * out_stride;
    for (int i = 0; i < axis.out_size; ++i) {
      const int32_t* k = &axis.weights[static_cast<size_t>(i) * axis.taps];
      const size_t base = static_cast<size_t>(axis.first[i]) * 4;
      const int n = (axis.count[i] + 1) & ~1;
      __m256i a = _mm256_setzero_si256();
      for (int j = 0; j < n; j += 2) {
        const __m256i w =
            _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(LoadLow64(k + j)), spread);
        a = _mm256_add_epi32(a, _mm256_mullo_epi32(TwoPixels(s + base + 4 * j), w));
      }
      StorePixel(d + 4 * i, FinishPixel(a));
    }
  }
}

void VerticalAvx2(const uint8_t* in, size_t in_stride, size_t row_bytes, const ResampleAxis& axis,
                  uint8_t* out, size_t out_stride) {
  const __m256i half = _mm256_set1_epi32(kHalf);
  // packs/packus work per 128-bit lane; this puts the dwords back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int i = 0; i < axis.out_size; ++i) {
    const int32_t* k = &axis.weights[static_cast<size_t>(i) * axis.taps];
    const uint8_t* src = in + static_cast<size_t>(axis.first[i]) * in_stride;
    const int count = axis.count[i];
    uint8_t* dst = out + i * out_stride;
    size_t b = 0;
    for (; b + 32 <= row_bytes; b += 32) {
      __m256i a0 = half, a1 = half, a2 = half, a3 = half;
      for (int j = 0; j < count; ++j) {
        const uint8_t* p = src + j * in_stride + b;
        const __m256i w = _mm256_set1_epi32(k[j]);
        a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(LoadLow64(p)), w));
        a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(LoadLow64(p + 8)), w));
        a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(LoadLow64(p + 16)), w));
        a3 = _mm256_add_epi32(a3, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(LoadLow64(p + 24)), w));
      }
      const __m256i p01 = _mm256_packs_epi32(_mm256_srai_epi32(a0, kWeightBits),
                                             _mm256_srai_epi32(a1, kWeightBits));
      const __m256i p23 = _mm256_packs_epi32(_mm256_srai_epi32(a2, kWeightBits),
                                             _mm256_srai_epi32(a3, kWeightBits));
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + b), bytes);
    }
    for (; b < row_bytes; b += 4) {
      __m128i a = _mm_set1_epi32(kHalf);
      for (int j = 0; j < count; ++j) {
        uint32_t pixel;
        std::memcpy(&pixel, src + j * in_stride + b, 4);
        a = _mm_add_epi32(
            a, _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(pixel)), _mm_set1_epi32(k[j])));
      }
      a = _mm_srai_epi32(a, kWeightBits);
      a = _mm_packus_epi16(_mm_packs_epi32(a, a), a);
      StorePixel(dst + b, static_cast<uint32_t>(_mm_cvtsi128_si32(a)));
    }
  }
}

}  // namespace qvl::resample
