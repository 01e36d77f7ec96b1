#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/bf16.h"

namespace qvl {
namespace {

constexpr int kKeyTile = 64;
constexpr int kMaxHeadDim = 256;

inline float Load(const float* p) { return *p; }
inline float Load(const uint16_t* p) { return Bf16ToF32(*p); }

// Streaming softmax state of one query row.
struct OnlineSoftmax {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
  float acc[kMaxHeadDim];

  void Reset(int d) {
    max = -std::numeric_limits<float>::infinity();
    sum = 0.0f;
    std::fill(acc, acc + d, 0.0f);
  }

  // Folds in a tile of scores and the value rows they weight: value(j) -> pointer.
  template <typename ValueRow>
  void Add(const float* scores, int n, int d, const ValueRow& value) {
    float tile_max = max;
    for (int j = 0; j < n; ++j) tile_max = std::max(tile_max, scores[j]);
    const float correction = std::exp(max - tile_max);
    sum *= correction;
    for (int i = 0; i < d; ++i) acc[i] *= correction;
    for (int j = 0; j < n; ++j) {
      const float p = std::exp(scores[j] - tile_max);
      sum += p;
      const auto* vr = value(j);
      for (int i = 0; i < d; ++i) acc[i] += p * Load(vr + i);
    }
    max = tile_max;
  }

  void Write(float* out, int d) const {
    const float inv = 1.0f / sum;
    for (int i = 0; i < d; ++i) out[i] = acc[i] * inv;
  }
};

template <typename T>
float Dot(const float* q, const T* k, int d) {
  float s = 0.0f;
  for (int i = 0; i < d; ++i) s += q[i] * Load(k + i);
  return s;
}

template <typename T>
void CausalRows(const CausalAttentionJob& job, int head, int kv_head, int heads, int head_dim,
                float scale, int64_t q_begin, int64_t q_end) {
  const KvLayerView& kv = job.kv;
  const T* kbase = static_cast<const T*>(kv.k);
  const T* vbase = static_cast<const T*>(kv.v);
  auto slot = [&](const T* base, int64_t t) {
    return base + kv.pages[t / kv.page_size] * kv.page_stride + kv_head * kv.head_stride +
           (t % kv.page_size) * head_dim;
  };
  OnlineSoftmax state;
  float scores[kKeyTile];
  const int64_t row = static_cast<int64_t>(heads) * head_dim;
  for (int64_t i = q_begin; i < q_end; ++i) {
    const float* q = job.q + i * row + static_cast<int64_t>(head) * head_dim;
    const int64_t n_keys = job.q_start + i + 1;
    state.Reset(head_dim);
    for (int64_t t0 = 0; t0 < n_keys; t0 += kKeyTile) {
      const int n = static_cast<int>(std::min<int64_t>(kKeyTile, n_keys - t0));
      for (int j = 0; j < n; ++j) scores[j] = Dot(q, slot(kbase, t0 + j), head_dim) * scale;
      state.Add(scores, n, head_dim, [&](int j) { return slot(vbase, t0 + j); });
    }
    state.Write(job.out + i * row + static_cast<int64_t>(head) * head_dim, head_dim);
  }
}

template <typename T>
void StoreRows(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int head_dim,
               const float* k, const float* v, int64_t stride) {
  T* kb = static_cast<T*>(kv.k);
  T* vb = static_cast<T*>(kv.v);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = t0 + i;
    const int64_t page_off =
        kv.pages[t / kv.page_size] * kv.page_stride + (t % kv.page_size) * head_dim;
    for (int h = 0; h < kv_heads; ++h) {
      const int64_t off = page_off + h * kv.head_stride;
      const float* ks = k + i * stride + static_cast<int64_t>(h) * head_dim;
      const float* vs = v + i * stride + static_cast<int64_t>(h) * head_dim;
      for (int d = 0; d < head_dim; ++d) {
        if constexpr (sizeof(T) == 4) {
          kb[off + d] = ks[d];
          vb[off + d] = vs[d];
        } else {
          kb[off + d] = F32ToBf16(ks[d]);
          vb[off + d] = F32ToBf16(vs[d]);
        }
      }
    }
  }
}

}  // namespace

void SegmentedFullAttention(const float* q, const float* k, const float* v, int64_t stride,
                            std::span<const int64_t> segments, int heads, int head_dim, float scale,
                            float* out, int64_t out_stride, ThreadPool& pool) {
  // Work items: (segment, head, block of 16 queries).
  constexpr int64_t kQueryBlock = 16;
  struct Item {
    int64_t seg_begin, seg_end, q_begin, q_end;
    int head;
  };
  std::vector<Item> items;
  for (size_t s = 0; s + 1 < segments.size(); ++s) {
    for (int h = 0; h < heads; ++h) {
      for (int64_t q0 = segments[s]; q0 < segments[s + 1]; q0 += kQueryBlock) {
        items.push_back(
            {segments[s], segments[s + 1], q0, std::min(q0 + kQueryBlock, segments[s + 1]), h});
      }
    }
  }
  pool.ParallelFor(static_cast<int64_t>(items.size()), 1, [&](int64_t b, int64_t e, int) {
    OnlineSoftmax state;
    float scores[kKeyTile];
    for (int64_t it = b; it < e; ++it) {
      const Item& item = items[it];
      const int64_t hoff = static_cast<int64_t>(item.head) * head_dim;
      for (int64_t i = item.q_begin; i < item.q_end; ++i) {
        const float* qi = q + i * stride + hoff;
        state.Reset(head_dim);
        for (int64_t t0 = item.seg_begin; t0 < item.seg_end; t0 += kKeyTile) {
          const int n = static_cast<int>(std::min<int64_t>(kKeyTile, item.seg_end - t0));
          for (int j = 0; j < n; ++j)
            scores[j] = Dot(qi, k + (t0 + j) * stride + hoff, head_dim) * scale;
          state.Add(scores, n, head_dim, [&](int j) { return v + (t0 + j) * stride + hoff; });
        }
        state.Write(out + i * out_stride + hoff, head_dim);
      }
    }
  });
}

void StoreKv(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int head_dim,
             const float* k, const float* v, int64_t stride) {
  if (kv.dtype == DType::kBF16) {
    StoreRows<uint16_t>(kv, t0, n, kv_heads, head_dim, k, v, stride);
  } else {
    StoreRows<float>(kv, t0, n, kv_heads, head_dim, k, v, stride);
  }
}

void CausalAttention(std::span<const CausalAttentionJob> jobs, int heads, int kv_heads,
                     int head_dim, float scale, ThreadPool& pool) {
  constexpr int64_t kQueryBlock = 16;
  struct Item {
    size_t job;
    int head;
    int64_t q_begin, q_end;
  };
  std::vector<Item> items;
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (int h = 0; h < heads; ++h) {
      for (int64_t q0 = 0; q0 < jobs[j].n_q; q0 += kQueryBlock) {
        items.push_back({j, h, q0, std::min(q0 + kQueryBlock, jobs[j].n_q)});
      }
    }
  }
  const int group = heads / kv_heads;
  pool.ParallelFor(static_cast<int64_t>(items.size()), 1, [&](int64_t b, int64_t e, int) {
    for (int64_t it = b; it < e; ++it) {
      const Item& item = items[it];
      const CausalAttentionJob& job = jobs[item.job];
      if (job.kv.dtype == DType::kBF16) {
        CausalRows<uint16_t>(job, item.head, item.head / group, heads, head_dim, scale,
                             item.q_begin, item.q_end);
      } else {
        CausalRows<float>(job, item.head, item.head / group, heads, head_dim, scale, item.q_begin,
                          item.q_end);
      }
    }
  });
}

}  // namespace qvl
