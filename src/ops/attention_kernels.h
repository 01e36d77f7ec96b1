// Per-tier inner kernels of flash attention (internal to ops/). The drivers in
// attention.cc walk query-row blocks and key blocks; these compute one block step:
//
//   qk:      s[r][c] = dot(q[r], key c)                      (scores of a row block)
//   softmax: online softmax update of a score block -> probabilities p, rescale alpha
//   pv:      o[r] = o[r] * alpha[r] + sum_c p[r][c] value[c]
//
// Keys and values are read in packed groups of kKeyGroup tokens of one head (layouts in
// KvGroupLayout below); a step takes up to kMaxGroups groups, given as pointers, so the
// same kernels read a paged KV cache or a contiguous panel.
//
// Compute formats: with f32 keys/values, q and p are f32; with bf16 keys/values, q and p
// are bf16 (every tier rounds them the same way, so tiers differ only in summation
// order). Accumulation is always f32.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"

namespace qvl::kernels {

constexpr int kKeyGroup = 16;
constexpr int kMaxGroups = 4;
constexpr int kKeyBlock = kKeyGroup * kMaxGroups;
// Partial sums kept per row by the softmax (the row's sum is their total), so a block
// step needs no horizontal add.
constexpr int kSumLanes = 16;
// Scores may exceed a row's reference maximum by this much (base 2) before the row is
// rescaled: probabilities up to 2^8, harmless in f32 and bf16.
constexpr float kMaxExcess = 8.0f;

// Element offsets of (token j < kKeyGroup, dim i < d) inside one packed group.
//   f32 keys   [d][16]           one 64-byte row of 16 tokens per dimension
//   f32 values [16][d]           token rows
//   bf16 keys  [d/2][16][2]      pairs of dimensions per token (the vdpbf16ps operand)
//   bf16 values [8][d][2]        pairs of tokens per dimension
// d must be even for bf16.
struct KvGroupLayout {
  static int64_t KeyF32(int j, int i, int /*d*/) { return int64_t{i} * kKeyGroup + j; }
  static int64_t ValueF32(int j, int i, int d) { return int64_t{j} * d + i; }
  static int64_t KeyBf16(int j, int i, int /*d*/) {
    return int64_t{i / 2} * (2 * kKeyGroup) + j * 2 + (i & 1);
  }
  static int64_t ValueBf16(int j, int i, int d) {
    return int64_t{j / 2} * (2 * d) + i * 2 + (j & 1);
  }
};

// The int8 KV cache (DType::kI8) stores a group as one byte per element, at the position
// of the bf16 layout above (keys or values), followed by its scales, [d/32][16] floats:
// token j's dims 32b .. 32b + 31 are code * scale[b][j] (blocks of 32 dims, as q8_0).
// d must be a multiple of 32. Attention dequantizes a group to bf16 and runs the bf16
// kernels.
constexpr int kKvI8Block = 32;
struct KvI8GroupLayout {
  static int64_t ScaleOffset(int d) { return int64_t{kKeyGroup} * d; }  // bytes
  static int64_t GroupBytes(int d) {
    return ScaleOffset(d) + int64_t{kKeyGroup} * d / kKvI8Block * 4;
  }
};

// out (16 d bf16, the bf16 key or value layout) = F32ToBf16(code * scale) of one int8
// group's codes (laid out the same way) and scales ([d/32][16]).
using DequantKvI8Fn = void (*)(const int8_t* codes, const float* scales, int d, bool values,
                               uint16_t* out);

// Scores of `rows` query rows against n_groups * kKeyGroup keys.
using QkF32Fn = void (*)(const float* q, int64_t ldq, int rows, const float* const* k_groups,
                         int n_groups, int d, float* s, int64_t lds);
using QkBf16Fn = void (*)(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* k_groups,
                          int n_groups, int d, float* s, int64_t lds);

// Online softmax over a block of `cols` scores per row, in base 2: x = score * scale_log2
// (softmax scale * log2(e)). Row r uses its first valid[r] columns (the rest get p = 0)
// and writes p = 2^(x - m_new), where m_new >= m[r] is the row's new reference: at least
// every x seen minus kMaxExcess (a tier may keep the old reference while the block stays
// within that margin, skipping the max and the rescale). l[r * kSumLanes ...] are the
// row's partial sums of p, alpha[r] = 2^(m_old - m_new) the factor the row's sums and
// output are rescaled by (0 while m was -inf). Rows with valid[r] == 0 keep m and l and
// get alpha = 1.
using SoftmaxF32Fn = void (*)(const float* s, int64_t lds, int rows, int cols, const int* valid,
                              float scale_log2, float* m, float* l, float* alpha, float* p,
                              int64_t ldp);
using SoftmaxBf16Fn = void (*)(const float* s, int64_t lds, int rows, int cols, const int* valid,
                               float scale_log2, float* m, float* l, float* alpha, uint16_t* p,
                               int64_t ldp);

// o[r][:d] = o[r][:d] * alpha[r] + p[r][:16 n_groups] . values.
using PvF32Fn = void (*)(const float* p, int64_t ldp, int rows, const float* const* v_groups,
                         int n_groups, int d, const float* alpha, float* o, int64_t ldo);
using PvBf16Fn = void (*)(const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* v_groups,
                          int n_groups, int d, const float* alpha, float* o, int64_t ldo);

struct AttentionKernels {
  QkF32Fn qk_f32;
  QkBf16Fn qk_bf16;
  SoftmaxF32Fn softmax_f32;
  SoftmaxBf16Fn softmax_bf16;
  PvF32Fn pv_f32;
  PvBf16Fn pv_bf16;
  DequantKvI8Fn dequant_kv_i8;
};

AttentionKernels ScalarAttentionKernels();
#if defined(__x86_64__)
AttentionKernels Avx2AttentionKernels();
AttentionKernels Avx512AttentionKernels();
AttentionKernels Avx512Bf16AttentionKernels();
AttentionKernels AmxAttentionKernels();
#endif
#if defined(__aarch64__)
AttentionKernels NeonAttentionKernels();
#endif

// The kernels for `tier` (falls back to the best lower tier that is compiled in).
AttentionKernels AttentionKernelsFor(CpuTier tier);
// For attention within segments (the vision tower): AttentionKernelsFor(tier), with the
// AMX tiles on kAmx.
AttentionKernels FullAttentionKernelsFor(CpuTier tier);

}  // namespace qvl::kernels
