#include "ops/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/bf16.h"

namespace qvl {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// softmax(q k^T scale) v for one query over keys [k0, k1), in double.
void NaiveRow(const float* q, const float* k, const float* v, int64_t stride, int64_t k0,
              int64_t k1, int d, float scale, float* out) {
  std::vector<double> p;
  double mx = -1e300;
  for (int64_t t = k0; t < k1; ++t) {
    double s = 0;
    for (int i = 0; i < d; ++i) s += static_cast<double>(q[i]) * k[t * stride + i];
    p.push_back(s * scale);
    mx = std::max(mx, p.back());
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - mx));
  for (int i = 0; i < d; ++i) {
    double acc = 0;
    for (int64_t t = k0; t < k1; ++t) acc += p[t - k0] * v[t * stride + i];
    out[i] = static_cast<float>(acc / sum);
  }
}

TEST(SegmentedFullAttention, MatchesNaiveAndNeverCrossesSegments) {
  std::mt19937 rng(1);
  ThreadPool pool(2, false);
  const int heads = 3, d = 8;
  const int64_t stride = heads * d;
  const std::vector<int64_t> segments = {0, 70, 75, 150};
  const int64_t n = segments.back();
  const auto q = Random(n * stride, rng), k = Random(n * stride, rng), v = Random(n * stride, rng);
  std::vector<float> out(n * stride);
  SegmentedFullAttention(q.data(), k.data(), v.data(), stride, segments, heads, d, 0.35f,
                         out.data(), stride, pool);
  std::vector<float> want(d);
  for (size_t s = 0; s + 1 < segments.size(); ++s)
    for (int64_t i = segments[s]; i < segments[s + 1]; ++i)
      for (int h = 0; h < heads; ++h) {
        NaiveRow(q.data() + i * stride + h * d, k.data() + h * d, v.data() + h * d, stride,
                 segments[s], segments[s + 1], d, 0.35f, want.data());
        for (int e = 0; e < d; ++e) ASSERT_NEAR(out[i * stride + h * d + e], want[e], 1e-5);
      }
}

// Builds a paged cache with a scrambled block table and checks causal GQA attention of a
// chunk of queries appended after a prefix.
void CheckPagedCausal(DType dtype, float tol) {
  std::mt19937 rng(2);
  ThreadPool pool(2, false);
  const int heads = 4, kv_heads = 2, d = 16, page = 8;
  const int64_t total = 45, prefix = 30;
  const int64_t kv_row = kv_heads * d, q_row = heads * d;
  auto k = Random(total * kv_row, rng), v = Random(total * kv_row, rng);
  if (dtype == DType::kBF16) {
    for (float& x : k) x = Bf16ToF32(F32ToBf16(x));
    for (float& x : v) x = Bf16ToF32(F32ToBf16(x));
  }
  const std::vector<int32_t> pages = {5, 0, 3, 1, 6, 2};  // 6 pages x 8 >= 45
  const int64_t head_stride = page * d, page_stride = kv_heads * head_stride * 1;
  const size_t elems = 7 * page_stride;
  std::vector<float> kf(elems), vf(elems);
  std::vector<uint16_t> kb(elems), vb(elems);
  KvLayerView kv;
  kv.dtype = dtype;
  kv.k = dtype == DType::kF32 ? static_cast<void*>(kf.data()) : kb.data();
  kv.v = dtype == DType::kF32 ? static_cast<void*>(vf.data()) : vb.data();
  kv.page_stride = page_stride;
  kv.head_stride = head_stride;
  kv.page_size = page;
  kv.pages = pages.data();
  StoreKv(kv, 0, prefix, kv_heads, d, k.data(), v.data(), kv_row);
  StoreKv(kv, prefix, total - prefix, kv_heads, d, k.data() + prefix * kv_row,
          v.data() + prefix * kv_row, kv_row);

  const int64_t n_q = total - prefix;
  const auto q = Random(n_q * q_row, rng);
  std::vector<float> out(n_q * q_row);
  CausalAttentionJob job;
  job.q = q.data();
  job.out = out.data();
  job.n_q = n_q;
  job.q_start = prefix;
  job.kv = kv;
  CausalAttention(std::span<const CausalAttentionJob>(&job, 1), heads, kv_heads, d, 0.25f, pool);

  std::vector<float> want(d);
  for (int64_t i = 0; i < n_q; ++i)
    for (int h = 0; h < heads; ++h) {
      const int g = h / (heads / kv_heads);
      NaiveRow(q.data() + i * q_row + h * d, k.data() + g * d, v.data() + g * d, kv_row, 0,
               prefix + i + 1, d, 0.25f, want.data());
      for (int e = 0; e < d; ++e) ASSERT_NEAR(out[i * q_row + h * d + e], want[e], tol);
    }
}

TEST(CausalAttention, PagedF32) { CheckPagedCausal(DType::kF32, 1e-5f); }
TEST(CausalAttention, PagedBf16) { CheckPagedCausal(DType::kBF16, 1e-5f); }

}  // namespace
}  // namespace qvl
