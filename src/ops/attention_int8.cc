#include "ops/attention_int8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "base/cpu_features.h"
#include "ops/attention_int8_kernels.h"
#include "ops/elementwise_kernels.h"

namespace qvl {
namespace {

using kernels::Int8GroupLayout;
using kernels::kKeyBlock;
using kernels::kKeyGroup;
using kernels::kMaxDp;
using kernels::kSumLanes;

constexpr int kQueryRows = kernels::kInt8MaxRows;  // query rows of one head per task
constexpr float kLog2e = 1.44269504088896341f;

const kernels::Int8AttentionKernels& Kernels() {
  static const kernels::Int8AttentionKernels k = kernels::Int8AttentionKernelsFor(ActiveTier());
  return k;
}

int64_t Padded(int64_t len) { return (len + kKeyGroup - 1) / kKeyGroup * kKeyGroup; }

// The packed queries, keys and values of every (segment, head). Keys and values: the
// groups of one pair contiguous, pair (s, h) from token slot seg_slot[s] * heads +
// h * Padded(len s). Queries: token-major, token t of segment s at slot seg_slot[s] + t,
// its heads in order (the quantizer writes one token's heads at once).
struct Int8Panel {
  std::vector<uint8_t> q;          // codes + 128: heads * dp per token slot
  std::vector<float> q_scale;      // heads per token slot
  std::vector<int8_t> k, v;        // codes, Int8GroupLayout
  std::vector<float> k_scale;      // per token slot (0 for padding)
  std::vector<int32_t> k_corr;     // per token slot: -128 * sum of its codes
  std::vector<float> k_mean;       // per pair and channel
  std::vector<float> v_scale;      // per pair and channel (dp of them)
  std::vector<float> v_inv;        // per pair and channel: 1 / v_scale (0 for a flat channel)
  std::vector<float> v_mean;       // per pair and channel
  std::vector<int64_t> seg_slot;   // per segment: padded tokens before it
  std::vector<int64_t> seg_chunk;  // per segment: statistics chunks before it
  std::vector<float> stats;        // per chunk: kStats arrays of heads * head_dim columns
};

Int8Panel& ThreadPanel() {
  thread_local Int8Panel panel;
  return panel;
}

template <typename T>
void Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Scratch of one task: a score block, its probabilities, the output accumulator and the
// softmax state.
struct Workspace {
  alignas(64) int32_t s[kQueryRows * kKeyBlock];
  alignas(64) uint8_t p[kQueryRows * kKeyBlock];
  alignas(64) float o[kQueryRows * kMaxDp];
  alignas(64) float l[kQueryRows * kSumLanes];
  float m[kQueryRows], alpha[kQueryRows], p_scale[kQueryRows], row_scale[kQueryRows];
};

Workspace& ThreadWorkspace() {
  thread_local std::unique_ptr<Workspace> ws = std::make_unique<Workspace>();
  return *ws;
}

// Where one (segment, head) pair's packed queries, keys and values live. Token t's query
// codes are q[t * heads * dp ..], its scale q_scale[t * heads].
struct PairView {
  uint8_t* q;
  float* q_scale;
  int8_t* k;
  float* k_scale;
  int32_t* k_corr;
  float* k_mean;
  int8_t* v;
  float* v_scale;
  float* v_inv;
  float* v_mean;
};

PairView Pair(Int8Panel& panel, size_t s, int h, int heads, int64_t len, int dp) {
  const int64_t slot = panel.seg_slot[s] * heads + h * Padded(len);
  const int64_t q_slot = panel.seg_slot[s] * heads + h;
  const int64_t pair = (static_cast<int64_t>(s) * heads + h) * dp;
  return {panel.q.data() + q_slot * dp, panel.q_scale.data() + q_slot, panel.k.data() + slot * dp,
          panel.k_scale.data() + slot,  panel.k_corr.data() + slot,    panel.k_mean.data() + pair,
          panel.v.data() + slot * dp,   panel.v_scale.data() + pair,   panel.v_inv.data() + pair,
          panel.v_mean.data() + pair};
}

// Tokens per statistics chunk: the key means and value ranges are summed per chunk, then
// over the chunks in order, so the result does not depend on which thread took which.
constexpr int64_t kStatRows = 256;
// A chunk's arrays: key sums, value sums, value minima, value maxima.
enum Stat { kKeySum, kValueSum, kValueLo, kValueHi, kStats };

int64_t Chunks(int64_t len) { return (len + kStatRows - 1) / kStatRows; }

// Column statistics of `rows` tokens (rows `stride` floats apart, `width` columns: every
// head) into one chunk's arrays, whole rows at a time.
void ChunkStats(const float* k, const float* v, int64_t stride, int64_t rows, int64_t width,
                float* stats) {
  const kernels::ElementwiseKernels& kern = kernels::ActiveElementwiseKernels();
  float* k_sum = stats + kKeySum * width;
  float* v_sum = stats + kValueSum * width;
  std::fill(k_sum, k_sum + width, 0.0f);
  std::fill(v_sum, v_sum + width, 0.0f);
  std::copy(v, v + width, stats + kValueLo * width);
  std::copy(v, v + width, stats + kValueHi * width);
  for (int64_t t = 0; t < rows; ++t) {
    kern.add(k_sum, k + t * stride, width);
    kern.add_min_max(v + t * stride, width, v_sum, stats + kValueLo * width,
                     stats + kValueHi * width);
  }
}

// A segment's key means and value scales per head, from its chunks' statistics.
void SegmentScales(Int8Panel& panel, size_t s, int64_t len, int heads, int d, int dp) {
  const int64_t width = int64_t{heads} * d;
  const float* stats = panel.stats.data() + panel.seg_chunk[s] * kStats * width;
  const int64_t chunks = Chunks(len);
  const float inv_len = 1.0f / static_cast<float>(len);
  for (int h = 0; h < heads; ++h) {
    const PairView out = Pair(panel, s, h, heads, len, dp);
    std::fill(out.k_mean, out.k_mean + dp, 0.0f);
    std::fill(out.v_mean, out.v_mean + dp, 0.0f);
    std::fill(out.v_scale, out.v_scale + dp, 0.0f);
    std::fill(out.v_inv, out.v_inv + dp, 0.0f);
    for (int i = 0; i < d; ++i) {
      const int64_t col = int64_t{h} * d + i;
      float k_sum = 0.0f, v_sum = 0.0f;
      float lo = stats[kValueLo * width + col], hi = stats[kValueHi * width + col];
      for (int64_t c = 0; c < chunks; ++c) {
        const float* chunk = stats + c * kStats * width;
        k_sum += chunk[kKeySum * width + col];
        v_sum += chunk[kValueSum * width + col];
        lo = std::min(lo, chunk[kValueLo * width + col]);
        hi = std::max(hi, chunk[kValueHi * width + col]);
      }
      out.k_mean[i] = k_sum * inv_len;
      out.v_mean[i] = v_sum * inv_len;
      const float amax = std::max(hi - out.v_mean[i], out.v_mean[i] - lo);
      out.v_inv[i] = amax > 0.0f ? 127.0f / amax : 0.0f;
      out.v_scale[i] = amax / 127.0f;
    }
  }
}

// Quantizes tokens [t0, t0 + n) (n <= kKeyGroup) of segment s, rows `stride` floats
// apart, for every head: the queries to unsigned codes, the keys (less their mean) into
// their groups with scales and corrections, the values into theirs. The quantizer takes
// a token's heads as rows, so the rows are read in order: head-by-head passes over the
// tokens read a fraction of a page per row and waited on memory for most of their time.
void PackGroup(const float* q, const float* k, const float* v, int64_t stride, int64_t t0, int n,
               Int8Panel& panel, size_t s, int64_t len, int heads, int d, int dp) {
  const kernels::Int8AttentionKernels& kern = Kernels();
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  const int64_t width = int64_t{heads} * d, ldq = int64_t{heads} * dp;
  const PairView first = Pair(panel, s, 0, heads, len, dp);
  constexpr int kHeadRows = 16;  // heads per quantizer call for the keys
  alignas(64) int8_t codes[kHeadRows * kMaxDp];
  float scales[kHeadRows];
  int32_t sums[kHeadRows];
  if (n < kKeyGroup) {  // the last group's padding tokens: zero codes, scales, corrections
    for (int h = 0; h < heads; ++h) {
      const PairView out = Pair(panel, s, h, heads, len, dp);
      std::memset(out.k + t0 / kKeyGroup * gb, 0, gb);
      std::fill(out.k_scale + t0 + n, out.k_scale + t0 + kKeyGroup, 0.0f);
      std::fill(out.k_corr + t0 + n, out.k_corr + t0 + kKeyGroup, 0);
    }
  }
  for (int j = 0; j < n; ++j) {
    const int64_t t = t0 + j;
    // The next token's rows while this one's are quantized, and this one's values for
    // the loop below (a prefetch past the buffer's end is harmless).
    for (const float* next : {q + (j + 1) * stride, k + (j + 1) * stride, v + j * stride}) {
      for (int64_t i = 0; i < width; i += 16) __builtin_prefetch(next + i);
    }
    kern.quantize_rotated(q + j * stride, d, heads, d, dp, nullptr,
                          reinterpret_cast<int8_t*>(first.q + t * ldq), first.q_scale + t * heads,
                          sums);
    // Keys: any vector subtracted from all keys leaves the probabilities as they are; the
    // mean leaves the smallest codes' range (a shared offset would dominate it). The
    // heads' means are dp apart, as the quantizer takes them.
    for (int h0 = 0; h0 < heads; h0 += kHeadRows) {
      const int rows = std::min(kHeadRows, heads - h0);
      kern.quantize_rotated(k + j * stride + h0 * d, d, rows, d, dp, first.k_mean + h0 * dp, codes,
                            scales, sums);
      for (int r = 0; r < rows; ++r) {
        const PairView out = Pair(panel, s, h0 + r, heads, len, dp);
        out.k_scale[t] = scales[r];
        out.k_corr[t] = -128 * sums[r];
        int8_t* group = out.k + t0 / kKeyGroup * gb;
        for (int i = 0; i < dp; i += 4) {
          std::memcpy(group + Int8GroupLayout::Key(j, i), codes + r * dp + i, 4);
        }
      }
    }
  }
  // Query codes + 128 (vpdpbusd's unsigned operand): flipping the sign bit.
  uint8_t* qc = first.q + t0 * ldq;
  for (int64_t i = 0; i < n * ldq; ++i) qc[i] ^= 0x80;
  for (int h = 0; h < heads; ++h) {
    const PairView out = Pair(panel, s, h, heads, len, dp);
    // Values: the probabilities sum to 1, so the mean comes back as an added constant.
    kern.quantize_values(v + h * d, stride, n, d, dp, out.v_mean, out.v_inv,
                         out.v + t0 / kKeyGroup * gb);
  }
}

// Query rows [q0, q0 + rows) of one pair against the pair's `len` keys.
void AttendRows(const PairView& pair, int64_t len, int64_t q0, int rows, int heads, int d, int dp,
                float scale_log2, float* out, int64_t out_stride) {
  const kernels::Int8AttentionKernels& kern = Kernels();
  Workspace& ws = ThreadWorkspace();
  const int64_t ldq = int64_t{heads} * dp;
  const uint8_t* q = pair.q + q0 * ldq;
  for (int r = 0; r < rows; ++r) {
    ws.row_scale[r] = pair.q_scale[(q0 + r) * heads] * scale_log2;
    ws.m[r] = -std::numeric_limits<float>::infinity();
  }
  std::fill(ws.l, ws.l + rows * kSumLanes, 0.0f);
  std::fill(ws.o, ws.o + rows * dp, 0.0f);
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  for (int64_t kb = 0; kb < len; kb += kKeyBlock) {
    const int valid = static_cast<int>(std::min<int64_t>(kKeyBlock, len - kb));
    const int n_groups = (valid + kKeyGroup - 1) / kKeyGroup;
    const int8_t* kg = pair.k + kb / kKeyGroup * gb;
    const int8_t* vg = pair.v + kb / kKeyGroup * gb;
    kern.qk(q, ldq, rows, kg, pair.k_corr + kb, n_groups, dp, ws.s, kKeyBlock);
    kern.softmax(ws.s, kKeyBlock, rows, n_groups * kKeyGroup, valid, ws.row_scale,
                 pair.k_scale + kb, ws.m, ws.l, ws.alpha, ws.p_scale, ws.p, kKeyBlock);
    kern.pv(ws.p, kKeyBlock, rows, vg, n_groups, dp, ws.alpha, ws.p_scale, ws.o, dp);
  }
  for (int r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int lane = 0; lane < kSumLanes; ++lane) sum += ws.l[r * kSumLanes + lane];
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    float* dst = out + r * out_stride;
    for (int i = 0; i < d; ++i) dst[i] = ws.o[r * dp + i] * inv * pair.v_scale[i] + pair.v_mean[i];
  }
}

}  // namespace

bool Int8AttentionAvailable() { return Kernels().qk != nullptr; }

void ReleaseInt8AttentionScratch() { ThreadPanel() = Int8Panel(); }

void SegmentedFullAttentionInt8(const float* q, const float* k, const float* v, int64_t stride,
                                std::span<const int64_t> segments, int heads, int head_dim,
                                float scale, float* out, int64_t out_stride, ThreadPool& pool) {
  const size_t num_segments = segments.size() < 2 ? 0 : segments.size() - 1;
  const int d = head_dim;
  const int dp = (d + 15) / 16 * 16;
  const int64_t width = int64_t{heads} * d;
  Int8Panel& panel = ThreadPanel();
  Grow(panel.seg_slot, num_segments);
  Grow(panel.seg_chunk, num_segments);
  int64_t slots = 0, chunks = 0;
  for (size_t s = 0; s < num_segments; ++s) {
    const int64_t len = segments[s + 1] - segments[s];
    panel.seg_slot[s] = slots;
    panel.seg_chunk[s] = chunks;
    slots += Padded(len);
    chunks += Chunks(len);
  }
  if (slots == 0) return;
  Grow(panel.q, slots * heads * dp);
  Grow(panel.q_scale, slots * heads);
  Grow(panel.k, slots * heads * dp);
  Grow(panel.v, slots * heads * dp);
  Grow(panel.k_scale, slots * heads);
  Grow(panel.k_corr, slots * heads);
  for (std::vector<float>* per_channel :
       {&panel.k_mean, &panel.v_scale, &panel.v_inv, &panel.v_mean}) {
    Grow(*per_channel, num_segments * heads * dp);
  }
  Grow(panel.stats, chunks * kStats * width);

  // Calls fn(s, first, count) for the tasks [tb, te) of a split of every segment into
  // pieces of `rows` tokens.
  const auto for_pieces = [&](int64_t rows, int64_t tb, int64_t te, const auto& fn) {
    int64_t before = 0;
    for (size_t s = 0; s < num_segments && tb < te; ++s) {
      const int64_t len = segments[s + 1] - segments[s];
      const int64_t pieces = (len + rows - 1) / rows;
      for (; tb < te && tb < before + pieces; ++tb) {
        const int64_t first = (tb - before) * rows;
        fn(s, first, std::min(rows, len - first));
      }
      before += pieces;
    }
  };

  // Statistics per chunk, then per segment and head.
  pool.ParallelFor(chunks, 1, [&](int64_t cb, int64_t ce, int) {
    for_pieces(kStatRows, cb, ce, [&](size_t s, int64_t first, int64_t count) {
      const int64_t row = (segments[s] + first) * stride;
      ChunkStats(k + row, v + row, stride, count, width,
                 panel.stats.data() + (panel.seg_chunk[s] + first / kStatRows) * kStats * width);
    });
  });
  for (size_t s = 0; s < num_segments; ++s) {
    if (segments[s + 1] > segments[s])
      SegmentScales(panel, s, segments[s + 1] - segments[s], heads, d, dp);
  }

  // Pack, one group of kKeyGroup tokens of every head per task: a task reads whole rows.
  pool.ParallelFor(slots / kKeyGroup, 1, [&](int64_t gb, int64_t ge, int) {
    for_pieces(kKeyGroup, gb, ge, [&](size_t s, int64_t first, int64_t count) {
      const int64_t off = (segments[s] + first) * stride;
      PackGroup(q + off, k + off, v + off, stride, first, static_cast<int>(count), panel, s,
                segments[s + 1] - segments[s], heads, d, dp);
    });
  });

  // Tasks: (segment, head, block of query rows).
  int64_t total = 0;
  for (size_t s = 0; s < num_segments; ++s) {
    total += heads * ((segments[s + 1] - segments[s] + kQueryRows - 1) / kQueryRows);
  }
  const float scale_log2 = scale * kLog2e;
  pool.ParallelFor(total, 1, [&](int64_t tb, int64_t te, int) {
    for (int64_t task = tb; task < te; ++task) {
      int64_t rest = task;
      size_t s = 0;
      for (;; ++s) {
        const int64_t blocks = (segments[s + 1] - segments[s] + kQueryRows - 1) / kQueryRows;
        if (rest < heads * blocks) break;
        rest -= heads * blocks;
      }
      const int64_t len = segments[s + 1] - segments[s];
      const int64_t blocks = (len + kQueryRows - 1) / kQueryRows;
      const int h = static_cast<int>(rest / blocks);
      const int64_t q0 = (rest % blocks) * kQueryRows;
      const int64_t row = segments[s] + q0;
      AttendRows(Pair(panel, s, h, heads, len, dp), len, q0,
                 static_cast<int>(std::min<int64_t>(kQueryRows, len - q0)), heads, d, dp,
                 scale_log2, out + row * out_stride + int64_t{h} * d, out_stride);
    }
  });
}

}  // namespace qvl
