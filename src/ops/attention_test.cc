#include "ops/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/error.h"

namespace qvl {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void RoundToBf16(std::vector<float>& v) {
  for (float& x : v) x = Bf16ToF32(F32ToBf16(x));
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

// bf16 rounds q, k, v and the probabilities: a few parts in 1e3 of the output (an int8
// cache attends in bf16 too, compared with its own quantized keys and values).
float Tolerance(DType dtype) { return dtype == DType::kF32 ? 1e-5f : 1e-2f; }

// What an int8 KV cache gives back for rows of [n, heads, d] (rows `stride` apart): per
// row, head and 32 dims, code = round(x * 127 / max |x|), then code * scale in bf16.
void QuantizeDequantizeI8(std::vector<float>& x, int64_t n, int heads, int d, int64_t stride) {
  for (int64_t r = 0; r < n; ++r)
    for (int h = 0; h < heads; ++h)
      for (int b = 0; b < d; b += 32) {
        float* block = x.data() + r * stride + h * d + b;
        float amax = 0.0f;
        for (int e = 0; e < 32; ++e) amax = std::max(amax, std::fabs(block[e]));
        const float scale = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int e = 0; e < 32; ++e) {
          const float code = std::clamp(std::nearbyint(block[e] * inv), -127.0f, 127.0f);
          block[e] = Bf16ToF32(F32ToBf16(code * scale));
        }
      }
}

void CheckSegmented(DType dtype, int heads, int d, const std::vector<int64_t>& segments) {
  SCOPED_TRACE(std::string(DTypeName(dtype)) + " d=" + std::to_string(d));
  std::mt19937 rng(1);
  ThreadPool pool(2, false);
  const int64_t stride = 3 * heads * d + 5;  // q | k | v inside a wider row, as in the tower
  const int64_t n = segments.back();
  auto qkv = Random(n * stride, rng);
  const float* q = qkv.data();
  const float* k = qkv.data() + heads * d;
  const float* v = qkv.data() + 2 * heads * d;
  const int64_t out_stride = heads * d;
  std::vector<float> out(n * out_stride);
  SegmentedFullAttention(q, k, v, stride, segments, heads, d, 0.35f, dtype, out.data(), out_stride,
                         pool);
  auto ref = qkv;
  if (dtype == DType::kBF16) RoundToBf16(ref);
  std::vector<float> want(d);
  for (size_t s = 0; s + 1 < segments.size(); ++s)
    for (int64_t i = segments[s]; i < segments[s + 1]; ++i)
      for (int h = 0; h < heads; ++h) {
        NaiveRow(ref.data() + i * stride + h * d, ref.data() + heads * d + h * d,
                 ref.data() + 2 * heads * d + h * d, stride, segments[s], segments[s + 1], d, 0.35f,
                 want.data());
        for (int e = 0; e < d; ++e)
          ASSERT_NEAR(out[i * out_stride + h * d + e], want[e], Tolerance(dtype))
              << "row " << i << " head " << h << " dim " << e;
      }
}

TEST(SegmentedFullAttention, MatchesNaiveAndNeverCrossesSegments) {
  const std::vector<int64_t> segments = {0, 70, 75, 150, 151};
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    CheckSegmented(dtype, 3, 8, segments);
    CheckSegmented(dtype, 2, 64, {0, 97});
  }
  CheckSegmented(DType::kF32, 2, 7, {0, 33});
}

TEST(SegmentedFullAttention, RejectsOddBf16HeadDim) {
  ThreadPool pool(1, false);
  std::vector<float> x(64);
  const std::vector<int64_t> segments = {0, 2};
  try {
    SegmentedFullAttention(x.data(), x.data(), x.data(), 7, segments, 1, 7, 1.0f, DType::kBF16,
                           x.data(), 7, pool);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "attention head_dim 7 is not supported (even, at most 256)");
  }
}

struct PagedCache {
  std::vector<float> kf, vf;
  std::vector<uint16_t> kb, vb;
  std::vector<uint8_t> ki, vi;
  std::vector<int32_t> pages;
  KvLayerView view;
};

// A cache of 8 scrambled pages whose unused slots hold NaN (int8: all bits set, so codes
// of -1 and NaN scales), as a recycled page may.
PagedCache MakeCache(DType dtype, int kv_heads, int d, int page) {
  PagedCache c;
  c.pages = {5, 0, 3, 1, 6, 2, 7, 4};
  const int64_t head_stride = int64_t{page} * KvTokenBytes(dtype, d) / DTypeSize(dtype);
  const int64_t page_stride = kv_heads * head_stride;
  const size_t elems = 8 * page_stride;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  c.kf.assign(elems, nan);
  c.vf.assign(elems, nan);
  c.kb.assign(elems, F32ToBf16(nan));
  c.vb.assign(elems, F32ToBf16(nan));
  c.ki.assign(elems, 0xff);
  c.vi.assign(elems, 0xff);
  c.view.dtype = dtype;
  c.view.k = dtype == DType::kF32    ? static_cast<void*>(c.kf.data())
             : dtype == DType::kBF16 ? static_cast<void*>(c.kb.data())
                                     : c.ki.data();
  c.view.v = dtype == DType::kF32    ? static_cast<void*>(c.vf.data())
             : dtype == DType::kBF16 ? static_cast<void*>(c.vb.data())
                                     : c.vi.data();
  c.view.page_stride = page_stride;
  c.view.head_stride = head_stride;
  c.view.page_size = page;
  c.view.pages = c.pages.data();
  return c;
}

// Causal GQA attention of chunks appended after cached prefixes, several sequences in
// one call, against the naive reference.
void CheckPagedCausal(DType dtype, int heads, int kv_heads, int d, int page) {
  SCOPED_TRACE(std::string(DTypeName(dtype)) + " heads=" + std::to_string(heads) + "/" +
               std::to_string(kv_heads) + " d=" + std::to_string(d));
  std::mt19937 rng(2);
  ThreadPool pool(2, false);
  const int64_t kv_row = kv_heads * d, q_row = heads * d;
  struct Seq {
    int64_t prefix, total;
  };
  const std::vector<Seq> seqs = {{30, 45}, {0, 77}, {100, 101}, {16, 17}};
  std::vector<PagedCache> caches;
  std::vector<std::vector<float>> ks, vs, qs, outs;
  std::vector<CausalAttentionJob> jobs;
  for (const Seq& s : seqs) {
    caches.push_back(MakeCache(dtype, kv_heads, d, page));
    ks.push_back(Random(s.total * kv_row, rng));
    vs.push_back(Random(s.total * kv_row, rng));
    qs.push_back(Random((s.total - s.prefix) * q_row, rng));
    outs.emplace_back((s.total - s.prefix) * q_row);
  }
  for (size_t i = 0; i < seqs.size(); ++i) {
    const KvLayerView& kv = caches[i].view;
    StoreKv(kv, 0, seqs[i].prefix, kv_heads, d, ks[i].data(), vs[i].data(), kv_row);
    StoreKv(kv, seqs[i].prefix, seqs[i].total - seqs[i].prefix, kv_heads, d,
            ks[i].data() + seqs[i].prefix * kv_row, vs[i].data() + seqs[i].prefix * kv_row, kv_row);
    CausalAttentionJob job;
    job.q = qs[i].data();
    job.out = outs[i].data();
    job.n_q = seqs[i].total - seqs[i].prefix;
    job.q_start = seqs[i].prefix;
    job.kv = kv;
    jobs.push_back(job);
  }
  CausalAttention(jobs, heads, kv_heads, d, 0.25f, pool);

  std::vector<float> want(d);
  for (size_t s = 0; s < seqs.size(); ++s) {
    auto k = ks[s], v = vs[s], q = qs[s];
    if (dtype == DType::kI8) {
      QuantizeDequantizeI8(k, seqs[s].total, kv_heads, d, kv_row);
      QuantizeDequantizeI8(v, seqs[s].total, kv_heads, d, kv_row);
    }
    if (dtype != DType::kF32) {
      RoundToBf16(k);
      RoundToBf16(v);
      RoundToBf16(q);
    }
    for (int64_t i = 0; i < jobs[s].n_q; ++i)
      for (int h = 0; h < heads; ++h) {
        const int g = h / (heads / kv_heads);
        NaiveRow(q.data() + i * q_row + h * d, k.data() + g * d, v.data() + g * d, kv_row, 0,
                 seqs[s].prefix + i + 1, d, 0.25f, want.data());
        for (int e = 0; e < d; ++e)
          ASSERT_NEAR(outs[s][i * q_row + h * d + e], want[e], Tolerance(dtype))
              << "sequence " << s << " query " << i << " head " << h;
      }
  }
}

TEST(CausalAttention, PagedF32) {
  CheckPagedCausal(DType::kF32, 4, 2, 16, 16);
  CheckPagedCausal(DType::kF32, 3, 3, 7, 32);
}
TEST(CausalAttention, PagedBf16) {
  CheckPagedCausal(DType::kBF16, 4, 2, 16, 16);
  CheckPagedCausal(DType::kBF16, 16, 8, 128, 32);
}

TEST(CausalAttention, PagedI8) {
  CheckPagedCausal(DType::kI8, 4, 2, 32, 16);
  CheckPagedCausal(DType::kI8, 16, 8, 128, 32);
}

// The int8 cache's error against the unquantized keys and values stays near bf16's: a
// block's codes keep 7 bits of its largest value.
TEST(CausalAttention, I8CacheStaysCloseToF32) {
  const int heads = 4, kv_heads = 2, d = 64, n = 40;
  std::mt19937 rng(3);
  ThreadPool pool(2, false);
  const int64_t kv_row = kv_heads * d, q_row = heads * d;
  const auto k = Random(n * kv_row, rng), v = Random(n * kv_row, rng), q = Random(n * q_row, rng);
  std::vector<float> got(n * q_row), want(n * q_row);
  for (DType dtype : {DType::kI8, DType::kF32}) {
    PagedCache cache = MakeCache(dtype, kv_heads, d, 16);
    StoreKv(cache.view, 0, n, kv_heads, d, k.data(), v.data(), kv_row);
    CausalAttentionJob job{q.data(), dtype == DType::kI8 ? got.data() : want.data(), n, 0,
                           cache.view};
    CausalAttention({&job, 1}, heads, kv_heads, d, 0.125f, pool);
  }
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += want[i] * double(want[i]);
  }
  EXPECT_LT(std::sqrt(err / norm), 0.02);
}

TEST(KvTokenBytes, I8IsCodesAndAScalePer32Dims) {
  EXPECT_EQ(KvTokenBytes(DType::kBF16, 128), 256);
  EXPECT_EQ(KvTokenBytes(DType::kF32, 128), 512);
  EXPECT_EQ(KvTokenBytes(DType::kI8, 128), 128 + 4 * 4);
}

// StoreKv into a cache of `dtype` with `page_size` and `head_dim` fails with `message`.
void ExpectStoreKvError(DType dtype, int page_size, int head_dim, const char* message) {
  KvLayerView kv;
  kv.dtype = dtype;
  kv.page_size = page_size;
  try {
    StoreKv(kv, 0, 0, 1, head_dim, nullptr, nullptr, head_dim);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), message);
  }
}

TEST(StoreKv, RejectsAnI8CacheWhoseHeadDimIsNotWholeBlocks) {
  ExpectStoreKvError(
      DType::kI8, 16, 48,
      "an int8 KV cache needs a head_dim that is a multiple of 32 (at most 256), got 48");
}

TEST(StoreKv, RejectsPagesThatAreNotWholeGroups) {
  ExpectStoreKvError(DType::kF32, 24, 8, "KV page size 24 is not a multiple of 16");
}

}  // namespace
}  // namespace qvl
