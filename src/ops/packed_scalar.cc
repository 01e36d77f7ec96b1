// Plain C++ twins of the packed-format kernels: the reference every SIMD tier is tested
// against (bit for bit where the hardware allows, see ops/packed_kernels.h) and the
// kernels of CPUs without a SIMD tier. Lanes of 16 outputs keep the loops vectorizable.
#include <cmath>
#include <cstring>

#include "base/bf16.h"
#include "ops/packed_kernels.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::kernels {
namespace {

constexpr int kLanes = kPanelRows;

inline float BitsToF32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void Store(const float* acc, const PanelRange& r, int64_t i, int64_t p) {
  const int64_t cols = r.n - p * kLanes;
  for (int64_t l = 0; l < kLanes && l < cols; ++l) {
    const int64_t j = p * kLanes + l;
    r.y[i * r.ldy + j] = acc[l] + (r.bias ? r.bias[j] : 0.0f);
  }
}

void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint16_t* w = reinterpret_cast<const uint16_t*>(r.w + p * r.panel_bytes);
    for (int64_t i = 0; i < m; ++i) {
      const uint16_t* xi = x + i * r.kp;
      float acc[kLanes] = {};
      for (int64_t t = 0; t < r.kp / 2; ++t) {
        const float x0 = Bf16ToF32(xi[2 * t]), x1 = Bf16ToF32(xi[2 * t + 1]);
        // Lane l's pair as one 32-bit word, split like the SIMD tiers do. (Indexing the
        // two halves separately is miscompiled by g++ 12's -O3 loop vectorizer.)
        uint32_t pairs[kLanes];
        std::memcpy(pairs, w + t * 2 * kLanes, sizeof(pairs));
        for (int l = 0; l < kLanes; ++l) {
          acc[l] =
              (acc[l] + x1 * BitsToF32(pairs[l] & 0xffff0000u)) + x0 * BitsToF32(pairs[l] << 16);
        }
      }
      Store(acc, r, i, p);
    }
  }
}

// Integer value of the weight at lane l, K offset kk (0..31) of block `blk` of a group.
inline int Q8Value(const uint8_t* group, int blk, int l, int kk) {
  return group[blk * 512 + (kk / 4) * 64 + l * 4 + kk % 4] - 128;
}
inline int Q4Value(const uint8_t* group, int blk, int l, int kk) {
  const int kgroup = kk / 4;
  return kQ4Levels[(group[blk * 256 + (kgroup % 4) * 64 + l * 4 + kk % 4] >> (4 * (kgroup / 4))) &
                   0xf];
}

template <bool kQ4>
void PackedQuant(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  const int64_t group_bytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  const int64_t scale_offset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  const int64_t blocks = r.kp / kQuantBlock;
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint8_t* w = r.w + p * r.panel_bytes;
    for (int64_t i = 0; i < m; ++i) {
      float acc[kLanes] = {};
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* group = w + (b / 2) * group_bytes;
        const int blk = static_cast<int>(b % 2);
        const int8_t* xq = x.codes + i * x.kp + b * kQuantBlock;
        const float sx = x.scales[i * blocks + b];
        const uint16_t* sw = reinterpret_cast<const uint16_t*>(group + scale_offset) + blk * kLanes;
        for (int l = 0; l < kLanes; ++l) {
          int32_t isum = 0;
          for (int kk = 0; kk < kQuantBlock; ++kk) {
            isum += (kQ4 ? Q4Value(group, blk, l, kk) : Q8Value(group, blk, l, kk)) * xq[kk];
          }
          acc[l] = std::fma(static_cast<float>(isum), F16ToF32(sw[l]) * sx, acc[l]);
        }
      }
      Store(acc, r, i, p);
    }
  }
}

void QuantizeRows(const float* x, int64_t ldx, int64_t m, int64_t k, int64_t kp, int8_t* codes,
                  float* scales, int32_t* corr) {
  const int64_t blocks = kp / kQuantBlock;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      float v[kQuantBlock];
      for (int kk = 0; kk < kQuantBlock; ++kk) {
        const int64_t c = b * kQuantBlock + kk;
        v[kk] = c < k ? x[i * ldx + c] : 0.0f;
      }
      float amax = 0.0f;
      for (float e : v) amax = std::fabs(e) > amax ? std::fabs(e) : amax;
      int8_t* q = codes + i * kp + b * kQuantBlock;
      int32_t sum = 0;
      if (amax > kQuantMinAmax) {
        const float inv = 127.0f / amax;
        for (int kk = 0; kk < kQuantBlock; ++kk) {
          float s = v[kk] * inv;
          s = s > -127.0f ? s : -127.0f;  // as vmaxps / vminps, NaN becomes -127
          s = s < 127.0f ? s : 127.0f;
          q[kk] = static_cast<int8_t>(std::nearbyint(s));
          sum += q[kk];
        }
        scales[i * blocks + b] = amax / 127.0f;
      } else {
        std::memset(q, 0, kQuantBlock);
        scales[i * blocks + b] = 0.0f;
      }
      corr[i * blocks + b] = -128 * sum;
    }
  }
}

}  // namespace

PackedKernels ScalarPackedKernels() {
  return {PackedBf16, PackedQuant<false>, PackedQuant<true>, QuantizeRows};
}

PackedKernels PackedKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAvx512Bf16:
      return Avx512Bf16PackedKernels();
    case CpuTier::kAvx512:
    case CpuTier::kAvx2:
      return Avx2PackedKernels();
    default:
      break;
  }
#endif
  (void)tier;
  return ScalarPackedKernels();
}

}  // namespace qvl::kernels
