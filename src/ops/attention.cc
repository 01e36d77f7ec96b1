#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "ops/attention_int8.h"
#include "ops/attention_kernels.h"
#include "ops/elementwise_kernels.h"
#include "ops/weight_pack_internal.h"

namespace qvl {
namespace {

using kernels::kKeyBlock;
using kernels::kKeyGroup;
using kernels::kKvI8Block;
using kernels::KvGroupLayout;
using kernels::KvI8GroupLayout;

static_assert(kKvGroupTokens == kKeyGroup);

constexpr int kMaxRows = 64;  // query rows (queries x heads of a group) per block
constexpr int kMaxHeadDim = 256;
constexpr float kLog2e = 1.44269504088896341f;

const kernels::AttentionKernels& Kernels() {
  static const kernels::AttentionKernels k = kernels::AttentionKernelsFor(ActiveTier());
  return k;
}

// Segmented full attention (the vision tower's) takes the matrix-engine kernels where the
// tier has them. Attention over the KV cache does not: one kernel set for every row count
// keeps a token's result the same alone, batched or chunked, and decode's few rows read
// the cache faster with vector loads.
const kernels::AttentionKernels& FullAttentionKernels() {
  static const kernels::AttentionKernels k = kernels::FullAttentionKernelsFor(ActiveTier());
  return k;
}

// Per-thread scratch of one row block: queries in the compute format, a score block, its
// probabilities, the output accumulator, softmax state and zero-padded copies of a
// partially filled key/value group.
struct Workspace {
  alignas(64) float q[kMaxRows * kMaxHeadDim];
  alignas(64) float s[kMaxRows * kKeyBlock];
  alignas(64) float p[kMaxRows * kKeyBlock];
  alignas(64) float o[kMaxRows * kMaxHeadDim];
  alignas(64) float tail_k[kKeyGroup * kMaxHeadDim];
  alignas(64) float tail_v[kKeyGroup * kMaxHeadDim];
  // Dequantized groups of an I8 cache (bf16), and a partial group's scales (zero past it).
  alignas(64) uint16_t deq_k[kernels::kMaxGroups * kKeyGroup * kMaxHeadDim];
  alignas(64) uint16_t deq_v[kernels::kMaxGroups * kKeyGroup * kMaxHeadDim];
  alignas(64) float tail_scales[kKeyGroup * kMaxHeadDim / kKvI8Block];
  alignas(64) float l[kMaxRows * kernels::kSumLanes];
  float m[kMaxRows], alpha[kMaxRows];
  int valid[kMaxRows];
  int limit[kMaxRows];
};

Workspace& ThreadWorkspace() {
  thread_local std::unique_ptr<Workspace> ws = std::make_unique<Workspace>();
  return *ws;
}

template <typename T>
int64_t KeyOffset(int j, int i, int d) {
  return sizeof(T) == 4 ? KvGroupLayout::KeyF32(j, i, d) : KvGroupLayout::KeyBf16(j, i, d);
}
template <typename T>
int64_t ValueOffset(int j, int i, int d) {
  return sizeof(T) == 4 ? KvGroupLayout::ValueF32(j, i, d) : KvGroupLayout::ValueBf16(j, i, d);
}

inline void Put(float v, float* out) { *out = v; }
inline void Put(float v, uint16_t* out) { *out = F32ToBf16(v); }
inline void PutRow(const float* v, int n, float* out) { std::memcpy(out, v, sizeof(float) * n); }
inline void PutRow(const float* v, int n, uint16_t* out) {
  kernels::ActiveElementwiseKernels().to_bf16(v, n, out);
}

// Start of the packed group holding token t (a multiple of 16) of kv head h.
template <typename T>
const T* GroupAt(const KvLayerView& kv, const void* base, int h, int64_t t, int d) {
  return static_cast<const T*>(base) + kv.pages[t / kv.page_size] * kv.page_stride +
         h * kv.head_stride + (t % kv.page_size) * d;
}

// A block of query rows that share one kv head: row r = i * group + j is query i, head j
// of the group, at q + i * q_stride + j * d. Query i sees keys [0, first_limit + i) when
// causal, else [0, first_limit).
struct RowBlock {
  const float* q;
  int64_t q_stride;
  float* out;
  int64_t out_stride;
  int n_q;
  int group;
  int64_t first_limit;
  bool causal;
};

// Start of the int8 group holding token t (a multiple of 16) of kv head h.
int8_t* I8GroupAt(const KvLayerView& kv, void* base, int h, int64_t t, int d) {
  return static_cast<int8_t*>(base) + kv.pages[t / kv.page_size] * kv.page_stride +
         h * kv.head_stride + (t % kv.page_size) / kKeyGroup * KvI8GroupLayout::GroupBytes(d);
}

// Starts reading the int8 keys and values of n_groups groups of kv head h from slot t0
// on. A cache page holds every layer, so each group is 2.3 KiB alone on its 4 KiB page:
// dequantized one after the other, each waited on a page walk and then on its lines in
// turn (the bf16 kernels read four groups at once and need no help: this slowed them).
// A load from every group starts the walks together, then prefetches (which a missing
// translation would drop) ask for the rest of the lines. BM_DecodeStepLayers at depth
// 4096 on the Zen 5: 24.7-26.0 ms -> 16.2-16.6 ms, against bf16's 14 ms.
void FetchI8Groups(const KvLayerView& kv, int h, int d, int64_t t0, int n_groups) {
  int first_bytes = 0;
  for (int g = 0; g < n_groups; ++g) {
    for (void* base : {kv.k, kv.v}) {
      const int8_t* group = I8GroupAt(kv, base, h, t0 + g * kKeyGroup, d);
      first_bytes += group[0];
      for (int64_t line = 64; line < KvI8GroupLayout::GroupBytes(d); line += 64) {
        __builtin_prefetch(group + line);
      }
    }
  }
  asm volatile("" : : "r"(first_bytes));  // the loads are the point: keep them
}

// One int8 group as bf16 in `out`; tokens from `filled` on (slots past the sequence,
// whose scales may be anything) come out as zeros.
void DequantGroup(const kernels::AttentionKernels& kern, const int8_t* group, int d, int filled,
                  bool values, float* tail_scales, uint16_t* out) {
  const float* scales = reinterpret_cast<const float*>(group + KvI8GroupLayout::ScaleOffset(d));
  if (filled < kKeyGroup) {
    for (int b = 0; b < d / kKvI8Block; ++b) {
      for (int j = 0; j < kKeyGroup; ++j) {
        tail_scales[b * kKeyGroup + j] = j < filled ? scales[b * kKeyGroup + j] : 0.0f;
      }
    }
    scales = tail_scales;
  }
  kern.dequant_kv_i8(group, scales, d, values, out);
}

// Keys and values of an I8 cache: a block's groups are dequantized to bf16 (per block of
// query rows, so a prefill chunk's rows share the work) and attended as a BF16 cache.
template <typename T>
void GatherI8Groups(const kernels::AttentionKernels& kern, const KvLayerView& kv, int kv_head,
                    int d, int64_t kb, int n_groups, int64_t key_end, Workspace& ws,
                    const T** k_groups, const T** v_groups) {
  FetchI8Groups(kv, kv_head, d, kb, n_groups);
  for (int g = 0; g < n_groups; ++g) {
    const int64_t t = kb + g * kKeyGroup;
    const int filled = static_cast<int>(std::min<int64_t>(kKeyGroup, key_end - t));
    uint16_t* k = ws.deq_k + g * kKeyGroup * d;
    uint16_t* v = ws.deq_v + g * kKeyGroup * d;
    DequantGroup(kern, I8GroupAt(kv, kv.k, kv_head, t, d), d, filled, false, ws.tail_scales, k);
    DequantGroup(kern, I8GroupAt(kv, kv.v, kv_head, t, d), d, filled, true, ws.tail_scales, v);
    k_groups[g] = reinterpret_cast<const T*>(k);
    v_groups[g] = reinterpret_cast<const T*>(v);
  }
}

template <typename T>
void AttendBlock(const kernels::AttentionKernels& kern, const KvLayerView& kv, int kv_head, int d,
                 float scale, const RowBlock& b) {
  Workspace& ws = ThreadWorkspace();
  const int rows = b.n_q * b.group;
  T* q = reinterpret_cast<T*>(ws.q);
  T* p = reinterpret_cast<T*>(ws.p);
  for (int i = 0; i < b.n_q; ++i) {
    for (int j = 0; j < b.group; ++j) {
      const int r = i * b.group + j;
      const float* src = b.q + i * b.q_stride + static_cast<int64_t>(j) * d;
      PutRow(src, d, q + r * d);
      ws.limit[r] = static_cast<int>(b.causal ? b.first_limit + i : b.first_limit);
      ws.m[r] = -std::numeric_limits<float>::infinity();
    }
  }
  std::fill(ws.l, ws.l + rows * kernels::kSumLanes, 0.0f);
  std::fill(ws.o, ws.o + rows * d, 0.0f);
  const int64_t key_end = b.causal ? b.first_limit + b.n_q - 1 : b.first_limit;
  const float scale_log2 = scale * kLog2e;

  const T* k_groups[kernels::kMaxGroups];
  const T* v_groups[kernels::kMaxGroups];
  for (int64_t kb = 0; kb < key_end; kb += kKeyBlock) {
    const int cols = static_cast<int>(std::min<int64_t>(kKeyBlock, key_end - kb));
    const int n_groups = (cols + kKeyGroup - 1) / kKeyGroup;
    if (kv.dtype == DType::kI8) {
      GatherI8Groups<T>(kern, kv, kv_head, d, kb, n_groups, key_end, ws, k_groups, v_groups);
    } else {
      for (int g = 0; g < n_groups; ++g) {
        const int64_t t = kb + g * kKeyGroup;
        k_groups[g] = GroupAt<T>(kv, kv.k, kv_head, t, d);
        v_groups[g] = GroupAt<T>(kv, kv.v, kv_head, t, d);
        const int filled = static_cast<int>(std::min<int64_t>(kKeyGroup, key_end - t));
        if (filled < kKeyGroup) {
          // Slots past the sequence may hold anything (even NaN from a recycled page):
          // read a zero-padded copy of the filled ones instead.
          T* tk = reinterpret_cast<T*>(ws.tail_k);
          T* tv = reinterpret_cast<T*>(ws.tail_v);
          std::memset(tk, 0, sizeof(T) * kKeyGroup * d);
          std::memset(tv, 0, sizeof(T) * kKeyGroup * d);
          for (int j = 0; j < filled; ++j) {
            for (int e = 0; e < d; ++e) {
              tk[KeyOffset<T>(j, e, d)] = k_groups[g][KeyOffset<T>(j, e, d)];
              tv[ValueOffset<T>(j, e, d)] = v_groups[g][ValueOffset<T>(j, e, d)];
            }
          }
          k_groups[g] = tk;
          v_groups[g] = tv;
        }
      }
    }
    const int width = n_groups * kKeyGroup;
    for (int r = 0; r < rows; ++r) {
      ws.valid[r] = static_cast<int>(std::clamp<int64_t>(ws.limit[r] - kb, 0, cols));
    }
    if constexpr (sizeof(T) == 4) {
      kern.qk_f32(q, d, rows, k_groups, n_groups, d, ws.s, kKeyBlock);
      kern.softmax_f32(ws.s, kKeyBlock, rows, width, ws.valid, scale_log2, ws.m, ws.l, ws.alpha, p,
                       kKeyBlock);
      kern.pv_f32(p, kKeyBlock, rows, v_groups, n_groups, d, ws.alpha, ws.o, d);
    } else {
      kern.qk_bf16(q, d, rows, k_groups, n_groups, d, ws.s, kKeyBlock);
      kern.softmax_bf16(ws.s, kKeyBlock, rows, width, ws.valid, scale_log2, ws.m, ws.l, ws.alpha, p,
                        kKeyBlock);
      kern.pv_bf16(p, kKeyBlock, rows, v_groups, n_groups, d, ws.alpha, ws.o, d);
    }
  }
  for (int i = 0; i < b.n_q; ++i) {
    for (int j = 0; j < b.group; ++j) {
      const int r = i * b.group + j;
      float sum = 0.0f;
      for (int lane = 0; lane < kernels::kSumLanes; ++lane) {
        sum += ws.l[r * kernels::kSumLanes + lane];
      }
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      float* dst = b.out + i * b.out_stride + static_cast<int64_t>(j) * d;
      for (int e = 0; e < d; ++e) dst[e] = ws.o[r * d + e] * inv;
    }
  }
}

void Attend(const kernels::AttentionKernels& kern, const KvLayerView& kv, int kv_head, int d,
            float scale, const RowBlock& b) {
  if (kv.dtype == DType::kBF16 || kv.dtype == DType::kI8) {
    AttendBlock<uint16_t>(kern, kv, kv_head, d, scale, b);
  } else {
    AttendBlock<float>(kern, kv, kv_head, d, scale, b);
  }
}

template <typename T>
void StoreRows(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int d, const float* k,
               const float* v, int64_t stride) {
  T* kb = static_cast<T*>(kv.k);
  T* vb = static_cast<T*>(kv.v);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = t0 + i;
    const int64_t group = t - t % kKeyGroup;
    const int j = static_cast<int>(t % kKeyGroup);
    const int64_t page_off =
        kv.pages[group / kv.page_size] * kv.page_stride + (group % kv.page_size) * d;
    for (int h = 0; h < kv_heads; ++h) {
      T* kg = kb + page_off + h * kv.head_stride;
      T* vg = vb + page_off + h * kv.head_stride;
      const float* ks = k + i * stride + static_cast<int64_t>(h) * d;
      const float* vs = v + i * stride + static_cast<int64_t>(h) * d;
      for (int e = 0; e < d; ++e) {
        Put(ks[e], kg + KeyOffset<T>(j, e, d));
        Put(vs[e], vg + ValueOffset<T>(j, e, d));
      }
    }
  }
}

// Keys and values of `n` tokens quantized into int8 groups: per token, head and 32 dims,
// scale = max |x| / 127 and codes round(x / scale), half to even. A block whose scale
// would be denormal is stored as zeros, so no code times its scale is a denormal (which
// vcvtneps2bf16 would flush and F32ToBf16 keep).
void StoreRowsI8(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int d, const float* k,
                 const float* v, int64_t stride) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = t0 + i;
    const int j = static_cast<int>(t % kKeyGroup);
    for (int h = 0; h < kv_heads; ++h) {
      for (int which = 0; which < 2; ++which) {
        int8_t* group = I8GroupAt(kv, which == 0 ? kv.k : kv.v, h, t - j, d);
        float* scales = reinterpret_cast<float*>(group + KvI8GroupLayout::ScaleOffset(d));
        const float* x = (which == 0 ? k : v) + i * stride + static_cast<int64_t>(h) * d;
        for (int b = 0; b < d / kKvI8Block; ++b) {
          float amax = 0.0f;
          for (int e = b * kKvI8Block; e < (b + 1) * kKvI8Block; ++e) {
            amax = std::max(amax, std::fabs(x[e]));
          }
          const bool normal = amax >= 127.0f * std::numeric_limits<float>::min();
          const float inv = normal ? 127.0f / amax : 0.0f;
          scales[b * kKeyGroup + j] = normal ? amax / 127.0f : 0.0f;
          for (int e = b * kKvI8Block; e < (b + 1) * kKvI8Block; ++e) {
            const int64_t at =
                which == 0 ? KvGroupLayout::KeyBf16(j, e, d) : KvGroupLayout::ValueBf16(j, e, d);
            const float code = pack::RoundToEven(x[e] * inv);
            // Written so that NaN (a diverged model's keys) becomes a code, not a bad cast.
            group[at] =
                static_cast<int8_t>(code >= -127.0f ? (code <= 127.0f ? code : 127.0f) : -127.0f);
          }
        }
      }
    }
  }
}

// The vision keys and values of all segments packed as a paged cache with 16-token pages
// and an identity block table; each segment starts on a fresh page.
struct Panel {
  std::vector<uint8_t> k, v;
  std::vector<int32_t> pages;
};

Panel& ThreadPanel() {
  thread_local Panel panel;
  return panel;
}

}  // namespace

void CheckKvLayout(DType dtype, int head_dim, int page_size) {
  if (dtype == DType::kI8) {
    if (head_dim <= 0 || head_dim > kMaxHeadDim || head_dim % kKvI8Block != 0) {
      Fail(ErrorCode::kInvalidArgument, "an int8 KV cache needs a head_dim that is a multiple of ",
           kKvI8Block, " (at most ", kMaxHeadDim, "), got ", head_dim);
    }
  } else if (dtype != DType::kF32 && dtype != DType::kBF16) {
    Fail(ErrorCode::kInvalidArgument, "attention needs f32, bf16 or i8 keys and values, got ",
         DTypeName(dtype));
  }
  if (head_dim <= 0 || head_dim > kMaxHeadDim || (dtype == DType::kBF16 && head_dim % 2 != 0)) {
    Fail(ErrorCode::kInvalidArgument, "attention head_dim ", head_dim,
         " is not supported (even, at most ", kMaxHeadDim, ")");
  }
  if (page_size <= 0 || page_size % kKeyGroup != 0) {
    Fail(ErrorCode::kInvalidArgument, "KV page size ", page_size, " is not a multiple of ",
         kKeyGroup);
  }
}

int64_t KvTokenBytes(DType dtype, int head_dim) {
  if (dtype == DType::kI8) return KvI8GroupLayout::GroupBytes(head_dim) / kKeyGroup;
  return int64_t{head_dim} * static_cast<int64_t>(DTypeSize(dtype));
}

void ReleaseAttentionScratch() {
  ThreadPanel() = Panel();
  ReleaseInt8AttentionScratch();
}

void StoreKv(const KvLayerView& kv, int64_t t0, int64_t n, int kv_heads, int head_dim,
             const float* k, const float* v, int64_t stride) {
  CheckKvLayout(kv.dtype, head_dim, kv.page_size);
  if (kv.dtype == DType::kI8) {
    StoreRowsI8(kv, t0, n, kv_heads, head_dim, k, v, stride);
  } else if (kv.dtype == DType::kBF16) {
    StoreRows<uint16_t>(kv, t0, n, kv_heads, head_dim, k, v, stride);
  } else {
    StoreRows<float>(kv, t0, n, kv_heads, head_dim, k, v, stride);
  }
}

void SegmentedFullAttention(const float* q, const float* k, const float* v, int64_t stride,
                            std::span<const int64_t> segments, int heads, int head_dim, float scale,
                            DType dtype, float* out, int64_t out_stride, ThreadPool& pool) {
  if (dtype == DType::kI8) {
    if (Int8AttentionAvailable()) {
      CheckKvLayout(DType::kF32, head_dim, kKeyGroup);
      SegmentedFullAttentionInt8(q, k, v, stride, segments, heads, head_dim, scale, out, out_stride,
                                 pool);
      return;
    }
    dtype = head_dim % 2 == 0 ? DType::kBF16 : DType::kF32;
  }
  CheckKvLayout(dtype, head_dim, kKeyGroup);
  const size_t num_segments = segments.size() < 2 ? 0 : segments.size() - 1;
  int64_t padded = 0;
  for (size_t s = 0; s < num_segments; ++s) {
    padded += (segments[s + 1] - segments[s] + kKeyGroup - 1) / kKeyGroup * kKeyGroup;
  }
  if (padded == 0) return;

  Panel& panel = ThreadPanel();
  const size_t bytes = static_cast<size_t>(padded) * heads * head_dim * DTypeSize(dtype);
  if (panel.k.size() < bytes) {
    panel.k.resize(bytes);
    panel.v.resize(bytes);
  }
  const int64_t n_pages = padded / kKeyGroup;
  if (static_cast<int64_t>(panel.pages.size()) < n_pages) {
    const size_t old = panel.pages.size();
    panel.pages.resize(n_pages);
    for (size_t i = old; i < panel.pages.size(); ++i) panel.pages[i] = static_cast<int32_t>(i);
  }
  KvLayerView view;
  view.dtype = dtype;
  view.k = panel.k.data();
  view.v = panel.v.data();
  // Head-major: a head's groups follow each other, so the AMX kernels take two groups'
  // values in one tile.
  view.page_stride = int64_t{kKeyGroup} * head_dim;
  view.head_stride = padded * head_dim;
  view.page_size = kKeyGroup;
  view.pages = panel.pages.data();

  // Pack, one group of 16 tokens per task; a segment's first token starts a page.
  pool.ParallelFor(n_pages, 8, [&](int64_t pb, int64_t pe, int) {
    int64_t page0 = 0;
    for (size_t s = 0; s < num_segments; ++s) {
      const int64_t len = segments[s + 1] - segments[s];
      const int64_t seg_pages = (len + kKeyGroup - 1) / kKeyGroup;
      const int64_t lo = std::max(pb, page0), hi = std::min(pe, page0 + seg_pages);
      for (int64_t pg = lo; pg < hi; ++pg) {
        const int64_t t = (pg - page0) * kKeyGroup;
        const int64_t row = segments[s] + t;
        const int64_t count = std::min<int64_t>(kKeyGroup, len - t);
        KvLayerView at = view;
        at.pages = view.pages + page0;
        if (dtype == DType::kBF16) {
          StoreRows<uint16_t>(at, t, count, heads, head_dim, k + row * stride, v + row * stride,
                              stride);
        } else {
          StoreRows<float>(at, t, count, heads, head_dim, k + row * stride, v + row * stride,
                           stride);
        }
      }
      page0 += seg_pages;
    }
  });

  // Tasks: (segment, head, block of query rows).
  constexpr int64_t kQueryRows = 32;
  int64_t total = 0;
  for (size_t s = 0; s < num_segments; ++s) {
    total += heads * ((segments[s + 1] - segments[s] + kQueryRows - 1) / kQueryRows);
  }
  pool.ParallelFor(total, 1, [&](int64_t tb, int64_t te, int) {
    for (int64_t task = tb; task < te; ++task) {
      int64_t rest = task, page0 = 0;
      size_t s = 0;
      for (;; ++s) {
        const int64_t len = segments[s + 1] - segments[s];
        const int64_t blocks = (len + kQueryRows - 1) / kQueryRows;
        if (rest < heads * blocks) break;
        rest -= heads * blocks;
        page0 += (len + kKeyGroup - 1) / kKeyGroup;
      }
      const int64_t len = segments[s + 1] - segments[s];
      const int64_t blocks = (len + kQueryRows - 1) / kQueryRows;
      const int h = static_cast<int>(rest / blocks);
      const int64_t q0 = (rest % blocks) * kQueryRows;
      KvLayerView at = view;
      at.pages = view.pages + page0;
      const int64_t row = segments[s] + q0;
      const int64_t hoff = static_cast<int64_t>(h) * head_dim;
      RowBlock b{q + row * stride + hoff,
                 stride,
                 out + row * out_stride + hoff,
                 out_stride,
                 static_cast<int>(std::min(kQueryRows, len - q0)),
                 1,
                 len,
                 false};
      Attend(FullAttentionKernels(), at, h, head_dim, scale, b);
    }
  });
}

void CausalAttention(std::span<const CausalAttentionJob> jobs, int heads, int kv_heads,
                     int head_dim, float scale, ThreadPool& pool) {
  if (jobs.empty()) return;
  if (kv_heads <= 0 || heads % kv_heads != 0) {
    Fail(ErrorCode::kInvalidArgument, "attention heads ", heads, " are not a multiple of kv heads ",
         kv_heads);
  }
  const int group = heads / kv_heads;
  if (group > kMaxRows) {
    Fail(ErrorCode::kInvalidArgument, "attention groups of ", group, " heads are not supported");
  }
  for (const CausalAttentionJob& job : jobs)
    CheckKvLayout(job.kv.dtype, head_dim, job.kv.page_size);
  const int64_t queries_per_block = kMaxRows / 2 / group > 0 ? kMaxRows / 2 / group : 1;
  int64_t total = 0;
  for (const CausalAttentionJob& job : jobs) {
    total += kv_heads * ((job.n_q + queries_per_block - 1) / queries_per_block);
  }
  const int64_t row = static_cast<int64_t>(heads) * head_dim;
  pool.ParallelFor(total, 1, [&](int64_t tb, int64_t te, int) {
    for (int64_t task = tb; task < te; ++task) {
      int64_t rest = task;
      size_t j = 0;
      for (;; ++j) {
        const int64_t n = kv_heads * ((jobs[j].n_q + queries_per_block - 1) / queries_per_block);
        if (rest < n) break;
        rest -= n;
      }
      const CausalAttentionJob& job = jobs[j];
      const int64_t blocks = (job.n_q + queries_per_block - 1) / queries_per_block;
      const int h = static_cast<int>(rest / blocks);
      // Later query blocks see more keys: hand them out first.
      const int64_t q0 = (blocks - 1 - rest % blocks) * queries_per_block;
      const int64_t hoff = static_cast<int64_t>(h) * group * head_dim;
      RowBlock b{job.q + q0 * row + hoff,
                 row,
                 job.out + q0 * row + hoff,
                 row,
                 static_cast<int>(std::min(queries_per_block, job.n_q - q0)),
                 group,
                 job.q_start + q0 + 1,
                 true};
      Attend(Kernels(), job.kv, h, head_dim, scale, b);
    }
  });
}

}  // namespace qvl
