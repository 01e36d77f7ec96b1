// Scaled dot-product attention: softmax(q k^T * scale) v, computed in float32 with an
// online (streaming) softmax over key tiles, so no [queries, keys] matrix is stored.
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"
#include "base/thread_pool.h"

namespace qvl {

// Bidirectional attention within segments: rows [seg[s], seg[s+1]) attend only to each
// other (one segment per image; the reference's cu_seqlens). q, k, v and out are
// [n, heads, d] with rows `stride` floats apart (out rows `out_stride`).
void SegmentedFullAttention(const float* q, const float* k, const float* v, int64_t stride,
                            std::span<const int64_t> segments, int heads, int head_dim, float scale,
                            float* out, int64_t out_stride, ThreadPool& pool);

// One layer of one sequence's paged KV cache. Token t of kv head h lives at
//   base + pages[t / page_size] * page_stride + h * head_stride + (t % page_size) * head_dim
// for base = k or v. Elements are F32 or BF16.
struct KvLayerView {
  DType dtype = DType::kF32;
  void* k = nullptr;
  void* v = nullptr;
  int64_t page_stride = 0;
  int64_t head_stride = 0;
  int page_size = 0;
  const int32_t* pages = nullptr;
};

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

void CausalAttention(std::span<const CausalAttentionJob> jobs, int heads, int kv_heads,
                     int head_dim, float scale, ThreadPool& pool);

}  // namespace qvl
