// Scaled dot-product attention: softmax(q k^T * scale) v, flash style: query rows are
// taken in blocks, keys in blocks of 64, with an online (streaming) softmax, so no
// [queries, keys] matrix is ever stored and each key/value block is read once per block
// of query rows (all query heads of a GQA group share it).
//
// Keys and values are read in packed groups of 16 tokens of one head (layouts in
// ops/attention_kernels.h: the operand shapes of the dot-product instructions), both
// from the paged KV cache and from the panel the vision attention packs its keys into.
//
// Precision follows the key/value dtype: F32 computes in float32; BF16 rounds q, k, v
// and the probabilities to bfloat16 and accumulates in float32 (as bf16 inference does).
// I8 in the vision attention quantizes q, k, v and the probabilities to 8 bits,
// SageAttention style (see ops/attention_int8.h): about 1.3 times the speed of BF16
// and 1.5 times its error where AVX512-VNNI exists, BF16 (F32 for odd head dims) where
// it does not. An I8 KV cache (0.56 times the memory of BF16) stores keys and values as
// int8 with a scale per token and 32 dims, and attends in BF16 after dequantizing them.
// Steady-state calls allocate nothing (per-thread workspaces grow to the largest call).
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"
#include "base/thread_pool.h"

namespace qvl {

// Bidirectional attention within segments: rows [seg[s], seg[s+1]) attend only to each
// other (one segment per image; the reference's cu_seqlens). q, k, v and out are
// [n, heads, d] with rows `stride` floats apart (out rows `out_stride`). dtype is kF32,
// kBF16 or kI8 (see above); bf16 needs an even head_dim.
void SegmentedFullAttention(const float* q, const float* k, const float* v, int64_t stride,
                            std::span<const int64_t> segments, int heads, int head_dim, float scale,
                            DType dtype, float* out, int64_t out_stride, ThreadPool& pool);

// Frees the calling thread's packed key/value panel of SegmentedFullAttention (it is kept
// between calls, which allocate nothing once it is large enough: 2 * n * heads * d
// elements, 12 MiB in bf16 for 3072 patches).
void ReleaseAttentionScratch();

// One layer of one sequence's paged KV cache. Token t of kv head h lives in the group
//   base + pages[t / page_size] * page_stride + h * head_stride
//        + (t % page_size) * KvTokenBytes(dtype, head_dim) / DTypeSize(dtype)
// for base = k or v (strides in elements: bytes for I8), at position t % 16 of that
// 16-token group (KvGroupLayout, KvI8GroupLayout). Elements are F32, BF16 or I8 (head_dim
// a multiple of 32); page_size is a multiple of 16.
struct KvLayerView {
  DType dtype = DType::kF32;
  void* k = nullptr;
  void* v = nullptr;
  int64_t page_stride = 0;
  int64_t head_stride = 0;
  int page_size = 0;
  const int32_t* pages = nullptr;
};

// Tokens per packed group; page sizes must be a multiple.
constexpr int kKvGroupTokens = 16;

// Bytes of one token of one kv head in a cache of `dtype`: head_dim elements, and for I8
// a float scale per 32 of them.
int64_t KvTokenBytes(DType dtype, int head_dim);

// Throws Error(kInvalidArgument) naming what a cache of `dtype` with these head dims and
// pages cannot hold.
void CheckKvLayout(DType dtype, int head_dim, int page_size);

// Writes keys and values of `n` tokens ([n, kv_heads, d], rows `stride` floats apart) to
// cache slots t0 .. t0 + n - 1.
void StoreKv(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int head_dim,
             const float* k, const float* v, int64_t stride);

// Causal attention of new queries against a sequence's cache: query i sits at cache
// slot q_start + i and attends slots [0, q_start + i]. q and out are [n_q, heads, d]
// with rows heads*d apart. Grouped-query: query head j reads kv head j / (heads/kv_heads).
struct CausalAttentionJob {
  const float* q = nullptr;
  float* out = nullptr;
  int64_t n_q = 0;
  int64_t q_start = 0;
  KvLayerView kv;
};

// All jobs (prefill chunks and decode steps of different sequences) in one parallel
// region.
void CausalAttention(std::span<const CausalAttentionJob> jobs, int heads, int kv_heads,
                     int head_dim, float scale, ThreadPool& pool);

}  // namespace qvl
