#include "ops/attention_int8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "base/cpu_features.h"
#include "ops/attention_int8_kernels.h"

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

// The packed keys and values of every (segment, head), the groups of one pair
// contiguous; pair (s, h) starts at token slot seg_slot[s] * heads + h * Padded(len s).
struct Int8Panel {
  std::vector<int8_t> k, v;       // codes, Int8GroupLayout
  std::vector<float> k_scale;     // per token slot (0 for padding)
  std::vector<int32_t> k_corr;    // per token slot: -128 * sum of its codes
  std::vector<float> v_scale;     // per pair and channel (dp of them)
  std::vector<float> v_mean;      // per pair and channel
  std::vector<int64_t> seg_slot;  // per segment: padded tokens before it
};

Int8Panel& ThreadPanel() {
  thread_local Int8Panel panel;
  return panel;
}

template <typename T>
void Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Scratch of one task: the query codes, a score block, its probabilities, the output
// accumulator and the softmax state.
struct Workspace {
  alignas(64) uint8_t q[kQueryRows * kMaxDp];
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

// Where one (segment, head) pair's packed keys and values live.
struct PairView {
  int8_t* k;
  float* k_scale;
  int32_t* k_corr;
  int8_t* v;
  float* v_scale;
  float* v_mean;
};

PairView Pair(Int8Panel& panel, size_t s, int h, int heads, int64_t len, int dp) {
  const int64_t slot = panel.seg_slot[s] * heads + h * Padded(len);
  const int64_t pair = static_cast<int64_t>(s) * heads + h;
  return {panel.k.data() + slot * dp,       panel.k_scale.data() + slot,
          panel.k_corr.data() + slot,       panel.v.data() + slot * dp,
          panel.v_scale.data() + pair * dp, panel.v_mean.data() + pair * dp};
}

// Quantizes `len` tokens of one head (rows `stride` floats apart) into the pair's groups.
void PackPair(const float* k, const float* v, int64_t stride, int64_t len, int d, int dp,
              const PairView& out) {
  const kernels::Int8AttentionKernels& kern = Kernels();
  const int64_t padded = Padded(len);
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  // The quantizers write every token of the panel; only the last group's padding tokens
  // need their zero codes, scales and corrections.
  if (padded > len) std::memset(out.k + (padded - kKeyGroup) * dp, 0, gb);
  std::fill(out.k_scale + len, out.k_scale + padded, 0.0f);
  std::fill(out.k_corr + len, out.k_corr + padded, 0);
  std::fill(out.v_scale, out.v_scale + dp, 0.0f);
  std::fill(out.v_mean, out.v_mean + dp, 0.0f);
  const float inv_len = 1.0f / static_cast<float>(len);

  // Keys: any vector subtracted from all keys leaves the probabilities as they are; the
  // mean leaves the smallest codes' range (a shared offset would dominate it).
  float mean[kMaxDp] = {};
  for (int64_t t = 0; t < len; ++t)
    for (int i = 0; i < d; ++i) mean[i] += k[t * stride + i];
  for (int i = 0; i < d; ++i) mean[i] *= inv_len;
  alignas(64) int8_t codes[kKeyGroup * kMaxDp];
  int32_t sums[kKeyGroup];
  for (int64_t t0 = 0; t0 < len; t0 += kKeyGroup) {
    const int n = static_cast<int>(std::min<int64_t>(kKeyGroup, len - t0));
    kern.quantize_rotated(k + t0 * stride, stride, n, d, dp, mean, codes, out.k_scale + t0, sums);
    int8_t* group = out.k + t0 / kKeyGroup * gb;
    for (int j = 0; j < n; ++j) {
      out.k_corr[t0 + j] = -128 * sums[j];
      for (int i = 0; i < dp; i += 4) {
        std::memcpy(group + Int8GroupLayout::Key(j, i), codes + j * dp + i, 4);
      }
    }
  }

  // Values: the probabilities sum to 1, so the mean comes back as an added constant.
  float lo[kMaxDp], hi[kMaxDp];
  std::copy(v, v + d, lo);
  std::copy(v, v + d, hi);
  for (int64_t t = 0; t < len; ++t) {
    for (int i = 0; i < d; ++i) {
      const float x = v[t * stride + i];
      out.v_mean[i] += x;
      lo[i] = std::min(lo[i], x);
      hi[i] = std::max(hi[i], x);
    }
  }
  float inv[kMaxDp];
  for (int i = 0; i < d; ++i) {
    out.v_mean[i] *= inv_len;
    const float amax = std::max(hi[i] - out.v_mean[i], out.v_mean[i] - lo[i]);
    inv[i] = amax > 0.0f ? 127.0f / amax : 0.0f;
    out.v_scale[i] = amax / 127.0f;
  }
  for (int64_t t0 = 0; t0 < len; t0 += kKeyGroup) {
    const int n = static_cast<int>(std::min<int64_t>(kKeyGroup, len - t0));
    kern.quantize_values(v + t0 * stride, stride, n, d, dp, out.v_mean, inv,
                         out.v + t0 / kKeyGroup * gb);
  }
}

// `rows` queries of one head (rows `q_stride` floats apart) against the pair's `len` keys.
void AttendRows(const PairView& pair, int64_t len, const float* q, int64_t q_stride, int rows,
                int d, int dp, float scale_log2, float* out, int64_t out_stride) {
  const kernels::Int8AttentionKernels& kern = Kernels();
  Workspace& ws = ThreadWorkspace();
  int32_t sums[kQueryRows];
  kern.quantize_rotated(q, q_stride, rows, d, dp, nullptr, reinterpret_cast<int8_t*>(ws.q),
                        ws.row_scale, sums);
  // Codes + 128 (vpdpbusd's unsigned operand): flipping the sign bit.
  for (int i = 0; i < rows * dp; ++i) ws.q[i] ^= 0x80;
  for (int r = 0; r < rows; ++r) {
    ws.row_scale[r] *= scale_log2;
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
    kern.qk(ws.q, dp, rows, kg, pair.k_corr + kb, n_groups, dp, ws.s, kKeyBlock);
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
  Int8Panel& panel = ThreadPanel();
  Grow(panel.seg_slot, num_segments);
  int64_t slots = 0;
  for (size_t s = 0; s < num_segments; ++s) {
    panel.seg_slot[s] = slots;
    slots += Padded(segments[s + 1] - segments[s]);
  }
  if (slots == 0) return;
  Grow(panel.k, slots * heads * dp);
  Grow(panel.v, slots * heads * dp);
  Grow(panel.k_scale, slots * heads);
  Grow(panel.k_corr, slots * heads);
  Grow(panel.v_scale, num_segments * heads * dp);
  Grow(panel.v_mean, num_segments * heads * dp);

  // Pack, one (segment, head) pair per task.
  const int64_t pairs = static_cast<int64_t>(num_segments) * heads;
  pool.ParallelFor(pairs, 1, [&](int64_t pb, int64_t pe, int) {
    for (int64_t pair = pb; pair < pe; ++pair) {
      const size_t s = static_cast<size_t>(pair / heads);
      const int h = static_cast<int>(pair % heads);
      const int64_t len = segments[s + 1] - segments[s];
      if (len == 0) continue;
      const int64_t off = segments[s] * stride + static_cast<int64_t>(h) * d;
      PackPair(k + off, v + off, stride, len, d, dp, Pair(panel, s, h, heads, len, dp));
    }
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
      const int64_t hoff = static_cast<int64_t>(h) * d;
      AttendRows(Pair(panel, s, h, heads, len, dp), len, q + row * stride + hoff, stride,
                 static_cast<int>(std::min<int64_t>(kQueryRows, len - q0)), d, dp, scale_log2,
                 out + row * out_stride + hoff, out_stride);
    }
  });
}

}  // namespace qvl
