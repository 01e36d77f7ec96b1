// Packed-format kernels for the AVX-512 tiers without AVX512-BF16. bf16 (for Skylake-X,
// Cascade Lake, Ice Lake): pairs widened to float (exact) and multiplied with 512-bit FMA,
// the AVX2 kernel's arithmetic on a whole 16-output panel per vector. Q8, Q4 and W8A8
// (for Skylake-X, without VNNI): packed_avx512_int8.h's tiles on AVX-512BW's vpmaddubsw,
// 64 products per step where AVX2 does 32. Built with the AVX-512 F/BW/VL/DQ flags only;
// `avx512vnni` takes the int8 kernels of packed_avx512vnni.cc instead.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ops/packed_avx512.h"
#include "ops/packed_avx512_int8.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {
namespace {

// bf16 pairs widened to float and multiplied with two vfmadd: acc = (acc + x1 * w1) +
// x0 * w0, as every tier rounds it. A tile of 4 x 4 accumulators, 2 widened x per row and
// 2 widened weights fills the 32 registers.
struct FmaPairs {
  static constexpr int kRows = 4, kPanels = 4;
  struct X {
    __m512 even, odd;
  };
  static X LoadX(int32_t pair) {
    const __m512i v = _mm512_set1_epi32(pair);
    return {avx512::EvenHalves(v), avx512::OddHalves(v)};
  }
  static __m512 Add(__m512 acc, X x, __m512i w) {
    return _mm512_fmadd_ps(x.even, avx512::EvenHalves(w),
                           _mm512_fmadd_ps(x.odd, avx512::OddHalves(w), acc));
  }
};

// Signed weight values times x codes, as AVX2's kernels: |x| * (w with x's sign) keeps
// vpmaddubsw's pair sums below 2^15 (AVX-512 has no vpsignb, so a masked subtract from
// zero puts x's sign on w), and vpmaddwd adds the pairs into int32. No correction: the
// signed weights' sums are the integers the VNNI kernels reach from the unsigned codes.
struct SignedProducts {
  static constexpr const int8_t* kQ4Table = kQ4Levels;
  static __m512i Start(int32_t) { return _mm512_setzero_si512(); }
  static __m512i Weights(__m512i codes) {
    return _mm512_xor_si512(codes, _mm512_set1_epi8(static_cast<char>(0x80)));
  }
  static void Dot(__m512i& acc, __m512i w, __m512i x) {
    const __m512i signed_w =
        _mm512_mask_sub_epi8(w, _mm512_movepi8_mask(x), _mm512_setzero_si512(), w);
    const __m512i pairs = _mm512_maddubs_epi16(_mm512_abs_epi8(x), signed_w);
    acc = _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
    // Keeps GCC 12 from regrouping a tile's unrolled integer sums, which spilled most of
    // the products to the stack.
    asm("" : "+v"(acc));
  }
};

// Activation rows for the int8 kernels, 16 blocks at a time: ReduceEach16 gives 16
// blocks' largest magnitudes (and code sums) in one vector.
void QuantizeRows(const float* x, int64_t ldx, int64_t m, int64_t k, const QuantizedRows& out) {
  const int64_t blocks = out.kp / kQuantBlock;
  const __m512 zero = _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const auto max = [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); };
  const auto add = [](__m512 a, __m512 b) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  };
  // Calls group.template operator()<kFull>(b0, load) for each 16 blocks from b0, where
  // load(j, half) is half of block b0 + j, zero past column k; kFull groups lie inside k.
  const auto for_groups = [&](const float* xi, const auto& group) {
    for (int64_t b0 = 0; b0 < blocks; b0 += 16) {
      const float* src = xi + b0 * kQuantBlock;
      if ((b0 + 16) * kQuantBlock <= k) {
        group.template operator()<true>(b0, [&](int j, int half) {
          return _mm512_loadu_ps(src + j * kQuantBlock + 16 * half);
        });
      } else {
        const int64_t left = k - b0 * kQuantBlock;
        group.template operator()<false>(b0, [&](int j, int half) {
          const int64_t c = j * kQuantBlock + 16 * half;
          return _mm512_maskz_loadu_ps(ColumnMask(left - c), src + c);
        });
      }
    }
  };
  QuantizeRowsWith(
      x, ldx, m, out,
      [&](const float* xi, float* amax) {
        for_groups(xi, [&]<bool kFull>(int64_t b0, const auto& load) {
          const int nb = kFull ? 16 : static_cast<int>(std::min<int64_t>(16, blocks - b0));
          __m512 v[16];
#pragma GCC unroll 16
          for (int j = 0; j < 16; ++j) {
            // |x| first: vmaxps returns its second operand for a NaN, which is ignored.
            v[j] = kFull || j < nb ? _mm512_max_ps(_mm512_abs_ps(load(j, 1)),
                                                   _mm512_max_ps(_mm512_abs_ps(load(j, 0)), zero))
                                   : zero;
          }
          _mm512_mask_storeu_ps(amax + b0, avx512::FirstLanes(nb), avx512::ReduceEach16(v, max));
        });
      },
      [&](const float* xi, const float* inv, int8_t* q, int32_t* sums) {
        for_groups(xi, [&]<bool kFull>(int64_t b0, const auto& load) {
          const int nb = kFull ? 16 : static_cast<int>(std::min<int64_t>(16, blocks - b0));
          __m512 s[16];
#pragma GCC unroll 16
          for (int j = 0; j < 16; ++j) {
            if (!kFull && j >= nb) {
              s[j] = zero;
              continue;
            }
            const __m512 iv = _mm512_set1_ps(inv[b0 + j]);
            __m512i codes[2];
            for (int half = 0; half < 2; ++half) {
              const __m512 v = _mm512_mul_ps(load(j, half), iv);
              codes[half] = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
              _mm_storeu_si128(reinterpret_cast<__m128i*>(q + (b0 + j) * kQuantBlock + 16 * half),
                               _mm512_cvtepi32_epi8(codes[half]));
            }
            s[j] = _mm512_castsi512_ps(_mm512_add_epi32(codes[0], codes[1]));
          }
          _mm512_mask_storeu_epi32(sums + b0, avx512::FirstLanes(nb),
                                   _mm512_castps_si512(avx512::ReduceEach16(s, add)));
        });
      });
}

}  // namespace

PackedKernels Avx512PackedKernels() {
  PackedKernels k = Avx2PackedKernels();
  k.quantize = QuantizeRows;
  k.bf16 = PackedBf16<FmaPairs>;
  k.bf16_rows = FmaPairs::kRows;
  k.q8 = PackedQ8<SignedProducts>;
  k.q4 = PackedQ4<SignedProducts>;
  k.quant_rows = kQuantRows;
  k.w8a8 = PackedW8A8<SignedProducts>;
  k.w8a8_rows = kStreamRows;
  return k;
}

}  // namespace qvl::kernels
