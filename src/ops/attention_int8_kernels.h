// Per-tier inner kernels of the int8 (SageAttention-style) flash attention, internal to
// ops/. One block step of a row block against up to kMaxGroups packed groups of 16 keys:
//
//   qk:      s[r][c] = corr[c] + sum_i q[r][i] * k[c][i]          (int32, exact)
//   softmax: x = s * row_scale[r] * k_scale[c] (base 2); p = round(255 * 2^(x - block max))
//   pv:      o[r] = o[r] * alpha[r] + p_scale[r] * sum_c p[r][c] v[c]    (int32 sums)
//
// q codes are unsigned (value + 128: vpdpbusd's unsigned operand), key codes signed;
// corr[c] = -128 * sum_i k[c][i] removes the offset, so s is exactly the signed dot
// product. Probabilities are unsigned bytes scaled to each row's maximum within the
// block (every step carries a p_scale), value codes signed. All integer sums are exact,
// so tiers differ only in the float parts (the score scaling and exp2).
//
// Head dims are padded with zeros to dp, a multiple of 16 (at most 256).
#pragma once

#include <cstdint>
#include <cstring>

#include "base/cpu_features.h"
#include "ops/attention_kernels.h"

namespace qvl::kernels {

// Query rows of the driver's row blocks (the kernels take any count; the vpdpbusd
// softmax works through them in chunks of this many).
constexpr int kInt8MaxRows = 32;

// The widest padded head dim.
constexpr int kMaxDp = 256;

// Byte offsets of (token j < kKeyGroup, dim i < dp) inside one packed int8 group.
//   keys   [dp/4][16][4]   four dims per token (the signed vpdpbusd operand, 16 tokens)
//   values [4][dp][4]      four tokens per dim (16 dims per vector)
struct Int8GroupLayout {
  static int64_t Key(int j, int i) { return int64_t{i / 4} * (4 * kKeyGroup) + j * 4 + (i & 3); }
  static int64_t Value(int j, int i, int dp) { return (int64_t{j / 4} * dp + i) * 4 + (j & 3); }
  static int64_t GroupBytes(int dp) { return int64_t{kKeyGroup} * dp; }
};

// Scores of `rows` query rows (codes q[r * ldq + i], i < dp) against n_groups
// consecutive key groups (k, GroupBytes(dp) apart) with their per-key corrections.
using QkI8Fn = void (*)(const uint8_t* q, int64_t ldq, int rows, const int8_t* k,
                        const int32_t* k_corr, int n_groups, int dp, int32_t* s, int64_t lds);

// Online softmax of a block of `cols` (= 16 n_groups) integer scores per row; keys
// c >= valid are padding (p = 0). x = s * row_scale[r] * k_scale[c] is the score times
// log2(e) / sqrt(d). Per row: mb = max of the block's x, m_new = max(m, mb); writes
// p = round(255 * 2^(x - mb)) (0 .. 255), alpha = 2^(m - m_new) (0 while m was -inf),
// p_scale = 2^(mb - m_new) / 255 (the block's probabilities are p * p_scale), and
// updates the partial sums: l = l * alpha + p_scale * (sums of p, over kSumLanes lanes).
using SoftmaxI8Fn = void (*)(const int32_t* s, int64_t lds, int rows, int cols, int valid,
                             const float* row_scale, const float* k_scale, float* m, float* l,
                             float* alpha, float* p_scale, uint8_t* p, int64_t ldp);

// o[r][:dp] = o[r][:dp] * alpha[r] + p_scale[r] * (p[r][:16 n_groups] . values) for
// n_groups consecutive value groups.
using PvI8Fn = void (*)(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups,
                        int dp, const float* alpha, const float* p_scale, float* o, int64_t ldo);

// Codes of `rows` query or key rows for the q.k products: row r is x[r * stride + i]
// minus center[r * dp + i] (i < d; a center per row, dp apart, as the per-head key means
// of one token's heads; center may be null), zero-padded to dp, rotated by the
// orthonormal Hadamard matrix H16 / 4 per block of 16 dims (butterflies in the order
// h = 1, 2, 4, 8, then the factor), and rounded half to even to codes[r * dp + i] in
// -127 .. 127 with the row's scale[r] = amax / 127; sum[r] is the sum of its codes.
using QuantizeRotatedFn = void (*)(const float* x, int64_t stride, int rows, int d, int dp,
                                   const float* center, int8_t* codes, float* scale, int32_t* sum);

// Value codes of one group: token j < rows is x[j * stride + i] (i < d), its code
// round((x - mean[i]) * inv_scale[i]) (half to even, clamped to -127 .. 127), written at
// Int8GroupLayout::Value; tokens rows .. kKeyGroup - 1 and dims d .. dp - 1 get 0.
using QuantizeValuesFn = void (*)(const float* x, int64_t stride, int rows, int d, int dp,
                                  const float* mean, const float* inv_scale, int8_t* group);

struct Int8AttentionKernels {
  QkI8Fn qk = nullptr;
  SoftmaxI8Fn softmax = nullptr;
  PvI8Fn pv = nullptr;
  QuantizeRotatedFn quantize_rotated = nullptr;
  QuantizeValuesFn quantize_values = nullptr;
};

// The shared parts of the SIMD tiers (ops/attention_int8_avx2.cc, _avxvnni.cc, _avx512vnni.cc).

// A SoftmaxI8Fn over any row count from one that takes at most kInt8MaxRows rows (the
// SIMD softmaxes keep each row's block maximum on the stack).
template <SoftmaxI8Fn kSoftmaxRows>
void SoftmaxInChunks(const int32_t* s, int64_t lds, int rows, int cols, int valid,
                     const float* row_scale, const float* k_scale, float* m, float* l, float* alpha,
                     float* p_scale, uint8_t* p, int64_t ldp) {
  for (int r = 0; r < rows; r += kInt8MaxRows) {
    kSoftmaxRows(s + r * lds, lds, rows - r < kInt8MaxRows ? rows - r : kInt8MaxRows, cols, valid,
                 row_scale + r, k_scale, m + r, l + r * kSumLanes, alpha + r, p_scale + r,
                 p + r * ldp, ldp);
  }
}

// The softmax of a block without valid keys: no probabilities, each row's state as it
// was (alpha 1, p_scale 0).
inline void EmptyBlock(int rows, int cols, float* alpha, float* p_scale, uint8_t* p, int64_t ldp) {
  for (int r = 0; r < rows; ++r) {
    alpha[r] = 1.0f;
    p_scale[r] = 0.0f;
    std::memset(p + r * ldp, 0, cols);
  }
}

// Before quantizing row r of `rows` (stride floats apart, d used): fetches the row
// kPrefetchRows ahead. Query and key rows are a qkv row apart (12 KB in the 2B tower), too
// far for the hardware prefetcher, and waiting for them took two thirds of the
// quantizer's time.
inline void PrefetchRowAhead(const float* xr, int64_t stride, int r, int rows, int d) {
  constexpr int kPrefetchRows = 4;
  if (r + kPrefetchRows >= rows) return;
  for (int i = 0; i < d; i += 16) __builtin_prefetch(xr + kPrefetchRows * stride + i, 0, 3);
}

Int8AttentionKernels ScalarInt8AttentionKernels();
#if defined(__x86_64__)
Int8AttentionKernels Avx2Int8AttentionKernels();
Int8AttentionKernels AvxVnniInt8AttentionKernels();  // q.k and p.v on 256-bit vpdpbusd
Int8AttentionKernels Avx512Int8AttentionKernels();   // 512-bit vpmaddwd
Int8AttentionKernels Avx512VnniInt8AttentionKernels();
#endif
#if defined(__aarch64__)
Int8AttentionKernels NeonInt8AttentionKernels();         // smull + sadalp (ARMv8.0)
Int8AttentionKernels NeonDotProdInt8AttentionKernels();  // sdot (ARMv8.2 dotprod)
#endif

// The int8 kernels for `tier`: the scalar twins for kScalar, vpmaddwd for kAvx2 (256-bit)
// and kAvx512 (512-bit), vpdpbusd for kAvxVnni (256-bit), kAvx512Vnni and the tiers above
// it (512-bit); on kNeon smull + sadalp, or sdot where the CPU reports dotprod.
Int8AttentionKernels Int8AttentionKernelsFor(CpuTier tier);

}  // namespace qvl::kernels
