// Attention speed at Qwen3-VL-2B shapes: the vision tower's full attention over one
// image (16 heads of 64; second argument 0 = f32, 1 = bf16, 2 = int8), text prefill
// (16 query / 8 kv heads of 128, causal), one layer's decode step at several cache
// depths and a whole decode step's attention (all layers, cold cache).
// Counters: GFLOP/s (4 n_q n_k d per head, halved for causal) and, for decode, the KV
// bytes read per second. Vision, 3072 patches, one core of an AVX512-VNNI EPYC
// (QVL_THREADS=1, CPU time): bf16 about 253 ms, int8 about 158 ms.
//   [QVL_THREADS=N] [QVL_CPU=tier] ./attention_benchmark [--benchmark_filter=Vision]
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "base/large_buffer.h"
#include "ops/attention.h"

namespace qvl {
namespace {

// On huge pages, as the model's activations are (base/large_buffer.h).
LargeVector<float> Random(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  LargeVector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// QVL_THREADS=1 measures one core: on a busy machine its CPU time is still the
// uncontended time.
ThreadPool& Pool() {
  static ThreadPool pool([] {
    const char* env = std::getenv("QVL_THREADS");
    return env ? std::atoi(env) : 0;
  }());
  return pool;
}

void BM_VisionAttention(benchmark::State& state) {
  const int64_t n = state.range(0);
  const DType dtypes[] = {DType::kF32, DType::kBF16, DType::kI8};
  const DType dtype = dtypes[state.range(1)];
  const int heads = 16, d = 64;
  const int64_t dv = heads * d;
  const auto qkv = Random(n * 3 * dv);
  LargeVector<float> out(n * dv);
  const std::vector<int64_t> segments = {0, n};
  for (auto _ : state) {
    SegmentedFullAttention(qkv.data(), qkv.data() + dv, qkv.data() + 2 * dv, 3 * dv, segments,
                           heads, d, 0.125f, dtype, out.data(), dv, Pool());
  }
  const double flops = 4.0 * n * n * d * heads;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_VisionAttention)
    ->ArgsProduct({{1024, 3072}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

struct Cache {
  std::vector<uint16_t> k, v;
  std::vector<int32_t> pages;
  KvLayerView view;
};

// A bf16 cache of `tokens` slots in 32-token pages, filled with random keys and values.
Cache MakeCache(int64_t tokens, int kv_heads, int d) {
  Cache c;
  const int page = 32;
  const int64_t n_pages = (tokens + page - 1) / page;
  c.k.resize(n_pages * kv_heads * page * d);
  c.v.resize(c.k.size());
  for (int64_t p = 0; p < n_pages; ++p) c.pages.push_back(static_cast<int32_t>(p));
  c.view.dtype = DType::kBF16;
  c.view.k = c.k.data();
  c.view.v = c.v.data();
  c.view.head_stride = int64_t{page} * d;
  c.view.page_stride = kv_heads * c.view.head_stride;
  c.view.page_size = page;
  c.view.pages = c.pages.data();
  const auto kv = Random(tokens * kv_heads * d);
  StoreKv(c.view, 0, tokens, kv_heads, d, kv.data(), kv.data(), kv_heads * d);
  return c;
}

void BM_TextPrefill(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int heads = 16, kv_heads = 8, d = 128;
  Cache c = MakeCache(n, kv_heads, d);
  const auto q = Random(n * heads * d);
  std::vector<float> out(q.size());
  CausalAttentionJob job{q.data(), out.data(), n, 0, c.view};
  for (auto _ : state) {
    CausalAttention(std::span<const CausalAttentionJob>(&job, 1), heads, kv_heads, d, 0.088f,
                    Pool());
  }
  const double flops = 2.0 * n * n * d * heads;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TextPrefill)->Arg(782)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Decode(benchmark::State& state) {
  const int64_t depth = state.range(0);
  const int heads = 16, kv_heads = 8, d = 128;
  Cache c = MakeCache(depth, kv_heads, d);
  const auto q = Random(heads * d);
  std::vector<float> out(q.size());
  CausalAttentionJob job{q.data(), out.data(), 1, depth - 1, c.view};
  for (auto _ : state) {
    CausalAttention(std::span<const CausalAttentionJob>(&job, 1), heads, kv_heads, d, 0.088f,
                    Pool());
  }
  const double bytes = 2.0 * depth * kv_heads * d * sizeof(uint16_t);
  state.counters["KV GB/s"] =
      benchmark::Counter(bytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Decode)
    ->Arg(1000)
    ->Arg(4000)
    ->Arg(16000)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// One decode step of all 28 layers of the 2B model at a cache depth, in the engine's KV
// pool layout (model/kv_pool.h: a 16-token page holds every layer's keys and values, 1.8
// MiB in bf16), so keys and values come from memory as in a real step, unlike BM_Decode's
// single layer that stays in cache. Second argument: 0 a bf16 cache, 1 an int8 one
// (--kv-cache-type q8, dequantized to bf16 block by block). At depth 782 on the EPYC
// (bf16): 3.5-4.4 ms, 21-26 GB/s while the read probe gave 29 GB/s; transparent huge
// pages for the pool changed nothing.
void BM_DecodeStepLayers(benchmark::State& state) {
  const int64_t depth = state.range(0);
  const DType dtype = state.range(1) == 0 ? DType::kBF16 : DType::kI8;
  const int heads = 16, kv_heads = 8, d = 128, layers = 28, page = 16;
  const int64_t elem = static_cast<int64_t>(DTypeSize(dtype));
  const int64_t head_elems = int64_t{page} * KvTokenBytes(dtype, d) / elem;
  const int64_t layer_elems = 2 * kv_heads * head_elems;  // keys, then values
  const int64_t page_elems = layers * layer_elems;
  const int64_t n_pages = (depth + page - 1) / page;
  const size_t bytes = static_cast<size_t>(n_pages * page_elems * elem);
  void* raw = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  uint8_t* pool = static_cast<uint8_t*>(raw);
  std::vector<int32_t> pages;
  for (int64_t p = 0; p < n_pages; ++p) pages.push_back(static_cast<int32_t>(p));
  const auto kv = Random(depth * kv_heads * d);
  std::vector<KvLayerView> views(layers);
  for (int l = 0; l < layers; ++l) {
    KvLayerView& v = views[l];
    v.dtype = dtype;
    v.k = pool + l * layer_elems * elem;
    v.v = pool + (l * layer_elems + kv_heads * head_elems) * elem;
    v.page_stride = page_elems;
    v.head_stride = head_elems;
    v.page_size = page;
    v.pages = pages.data();
    StoreKv(v, 0, depth, kv_heads, d, kv.data(), kv.data(), kv_heads * d);
  }
  const auto q = Random(heads * d);
  std::vector<float> out(q.size());
  for (auto _ : state) {
    for (const KvLayerView& v : views) {
      CausalAttentionJob job{q.data(), out.data(), 1, depth - 1, v};
      CausalAttention(std::span<const CausalAttentionJob>(&job, 1), heads, kv_heads, d, 0.088f,
                      Pool());
    }
  }
  const double read = 2.0 * layers * depth * kv_heads * KvTokenBytes(dtype, d);
  state.counters["KV GB/s"] =
      benchmark::Counter(read * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  ::munmap(raw, bytes);
}
BENCHMARK(BM_DecodeStepLayers)
    ->ArgsProduct({{782, 2048, 4096}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
