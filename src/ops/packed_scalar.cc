// Plain C++ twins of the packed-format kernels: the reference every SIMD tier is tested
// against (bit for bit where the hardware allows, see ops/packed_kernels.h) and the
// kernels of CPUs without a SIMD tier. Lanes of 16 outputs keep the loops vectorizable.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/bf16.h"
#include "ops/hadamard.h"
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

inline void Put(float v, const PanelRange& r, int64_t at) {
  r.y[at] = r.accumulate ? r.y[at] + v : v;
}

void Store(const float* acc, const PanelRange& r, int64_t i, int64_t p) {
  const int64_t cols = r.n - p * kLanes;
  for (int64_t l = 0; l < kLanes && l < cols; ++l) {
    const int64_t j = p * kLanes + l;
    Put(acc[l] + (r.bias ? r.bias[j] : 0.0f), r, i * r.ldy + j);
  }
}

// y = fma(acc, row_scale, bias) for the quantized formats.
void StoreScaled(const float* acc, float row_scale, const PanelRange& r, int64_t i, int64_t p) {
  const int64_t cols = r.n - p * kLanes;
  for (int64_t l = 0; l < kLanes && l < cols; ++l) {
    const int64_t j = p * kLanes + l;
    Put(std::fma(acc[l], row_scale, r.bias ? r.bias[j] : 0.0f), r, i * r.ldy + j);
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
        const float factor = x.factors[i * blocks + b];
        const uint16_t* sw = reinterpret_cast<const uint16_t*>(group + scale_offset) + blk * kLanes;
        for (int l = 0; l < kLanes; ++l) {
          int32_t isum = 0;
          for (int kk = 0; kk < kQuantBlock; ++kk) {
            isum += (kQ4 ? Q4Value(group, blk, l, kk) : Q8Value(group, blk, l, kk)) * xq[kk];
          }
          acc[l] = std::fma(static_cast<float>(isum) * factor, F16ToF32(sw[l]), acc[l]);
        }
      }
      StoreScaled(acc, x.row_scales[i], r, i, p);
    }
  }
}

void QuantizeRows(const float* x, int64_t ldx, int64_t m, int64_t k, const QuantizedRows& out) {
  auto value = [&](const float* xi, int64_t c) { return c < k ? xi[c] : 0.0f; };
  const int64_t blocks = out.kp / kQuantBlock;
  QuantizeRowsWith(
      x, ldx, m, out,
      [&](const float* xi, float* amax) {
        for (int64_t b = 0; b < blocks; ++b) {
          amax[b] = 0.0f;
          for (int64_t c = b * kQuantBlock; c < (b + 1) * kQuantBlock; ++c) {
            amax[b] = std::fabs(value(xi, c)) > amax[b] ? std::fabs(value(xi, c)) : amax[b];
          }
        }
      },
      [&](const float* xi, const float* inv, int8_t* q, int32_t* sums) {
        for (int64_t b = 0; b < blocks; ++b) {
          sums[b] = 0;
          for (int64_t c = b * kQuantBlock; c < (b + 1) * kQuantBlock; ++c) {
            float v = value(xi, c) * inv[b];
            v = v > -127.0f ? v : -127.0f;  // as vmaxps / vminps, NaN becomes -127
            v = v < 127.0f ? v : 127.0f;
            q[c] = static_cast<int8_t>(std::nearbyint(v));
            sums[b] += q[c];
          }
        }
      });
}

void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint8_t* w = r.w + p * r.panel_bytes;
    const float* sw = reinterpret_cast<const float*>(w + r.kp * kLanes);
    const int64_t cols = r.n - p * kLanes;
    for (int64_t i = 0; i < m; ++i) {
      const int8_t* xq = x.codes + i * x.kp;
      for (int64_t l = 0; l < kLanes && l < cols; ++l) {
        int32_t isum = x.corr[i];
        for (int64_t c = 0; c < r.kp; ++c) isum += w[pack::W8A8CodeOffset(c, l)] * xq[c];
        const int64_t j = p * kLanes + l;
        Put(std::fma(static_cast<float>(isum), x.steps[i] * sw[l], r.bias ? r.bias[j] : 0.0f), r,
            i * r.ldy + j);
      }
    }
  }
}

void QuantizeRowsW8A8(const float* x, int64_t ldx, int64_t m, int64_t k, const RowCodes& out) {
  const int64_t block = W8A8RotationBlock(out.kp);
  QuantizeRowsW8A8With(
      x, ldx, m, out,
      [&](const float* xi, float* rotated) {
        for (int64_t c = 0; c < out.kp; ++c) rotated[c] = c < k ? xi[c] : 0.0f;
        HadamardBlocks(rotated, out.kp, block);
        float amax = 0.0f;
        for (int64_t c = 0; c < out.kp; ++c) {
          amax = std::fabs(rotated[c]) > amax ? std::fabs(rotated[c]) : amax;
        }
        return amax;
      },
      [&](const float* rotated, float inv, int8_t* q) {
        int32_t sum = 0;
        for (int64_t c = 0; c < out.kp; ++c) {
          float v = rotated[c] * inv;
          v = v > -127.0f ? v : -127.0f;
          v = v < 127.0f ? v : 127.0f;
          q[c] = static_cast<int8_t>(std::nearbyint(v));
          sum += q[c];
        }
        return sum;
      });
}

}  // namespace

int ChooseBlockExponents(const float* amax, int64_t blocks, float* exps) {
  // Block b's step with mantissa c: the least c * 2^e >= amax / 127 = mant * 2^E is
  // c * 2^E when mant <= c, else c * 2^(E + 1); its square is 4^E c^2, or 4 times that.
  // So the row's cost for c_j is c_j^2 (sum of 4^E + 3 * sum of 4^E over blocks with
  // mant > c_j); blocks are binned by how many mantissas lie below their own. The mantissas
  // lie in [1, 2), where comparing floats is comparing their 23 fraction bits.
  constexpr uint32_t kFraction = 0x007fffffu;
  static constexpr std::array<uint32_t, 8> kRowMantissaFractions = [] {
    std::array<uint32_t, 8> f{};
    for (int j = 0; j < 8; ++j) f[j] = std::bit_cast<uint32_t>(kRowMantissa[j]) & kFraction;
    return f;
  }();
  // Grows to the longest row once per thread: each block's bin, -1 for a zero block.
  thread_local std::vector<int8_t> bins;
  if (bins.size() < static_cast<size_t>(blocks)) bins.resize(blocks);
  double above[9] = {};  // above[t]: sum of 4^E over blocks with t mantissas below mant
  double total = 0.0;
  for (int64_t b = 0; b < blocks; ++b) {
    if (!Quantizable(amax[b])) {
      bins[b] = -1;
      exps[b] = 0.0f;
      continue;
    }
    const float step = amax[b] / 127.0f;
    uint32_t bits;
    std::memcpy(&bits, &step, 4);
    const int exp = static_cast<int>(bits >> 23) - 127;  // a normal, positive step
    int below = 0;
    for (int j = 0; j < 8; ++j) below += (bits & kFraction) > kRowMantissaFractions[j];
    const uint64_t weight_bits = static_cast<uint64_t>(2 * exp + 1023) << 52;  // 4^exp
    double weight;
    std::memcpy(&weight, &weight_bits, 8);
    above[below] += weight;
    total += weight;
    bins[b] = static_cast<int8_t>(below);
    exps[b] = static_cast<float>(exp);
  }
  int best = 0;
  double best_cost = 0.0, over = total;  // over: sum of 4^E over blocks with mant > c_j
  for (int j = 0; j < 8; ++j) {
    over -= above[j];
    const double cost =
        static_cast<double>(kRowMantissa[j]) * kRowMantissa[j] * (total + 3.0 * over);
    if (j == 0 || cost < best_cost) {
      best = j;
      best_cost = cost;
    }
  }
  // mant > c_best exactly when more than `best` mantissas lie below it.
  for (int64_t b = 0; b < blocks; ++b) exps[b] += bins[b] > best ? 1.0f : 0.0f;
  return best;
}

PackedKernels ScalarPackedKernels() {
  return {.bf16 = PackedBf16,
          .q8 = PackedQuant<false>,
          .q4 = PackedQuant<true>,
          .quantize = QuantizeRows,
          .bf16_rows = 1,
          .quant_rows = 1,
          .w8a8 = PackedW8A8,
          .quantize_w8a8 = QuantizeRowsW8A8,
          .w8a8_rows = 1};
}

PackedKernels PackedKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAmx:
      return AmxPackedKernels();
    case CpuTier::kAvx512Bf16:
      return Avx512Bf16PackedKernels();
    case CpuTier::kAvx512Vnni:
      return Avx512VnniPackedKernels();
    case CpuTier::kAvxVnni:
      return AvxVnniPackedKernels();
    case CpuTier::kAvx512:
      return Avx512PackedKernels();
    case CpuTier::kAvx2:
      return Avx2PackedKernels();
    default:
      break;
  }
#endif
#if defined(__aarch64__)
  if (tier == CpuTier::kNeon) {
    const CpuFeatures& f = GetCpuFeatures();
    if (f.arm_dotprod && f.arm_i8mm) return NeonI8mmPackedKernels();
    return f.arm_dotprod ? NeonDotProdPackedKernels() : NeonPackedKernels();
  }
#endif
  (void)tier;
  return ScalarPackedKernels();
}

}  // namespace qvl::kernels
