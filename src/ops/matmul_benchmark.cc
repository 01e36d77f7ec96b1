// Linear-layer speed at the Qwen3-VL-2B shapes, per weight format: GEMV for decode
// (M = 1, 2, 4, 5, 8, 16: batched streams and speculative drafts), GEMM for prefill
// (M = 512) and the vision tower (M = 3072); and the int8 formats' activation quantizer
// and the q8 / q4 packers alone. Counters:
// GFLOP/s (2 M N K per call) and GB/s of weight bytes read, from wall time, and the same
// from the main thread's CPU time (cpu_GFLOP/s, cpu_GB/s): with QVL_THREADS=1 those are
// the kernel's own speed even on a loaded machine. BM_ReadProbe streams a buffer on
// 2 MiB pages (as packed weights are) with every thread: the bound for GEMV GB/s.
//   matmul_benchmark --benchmark_filter='q8/M:1/' --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
// QVL_CPU=avx2|scalar lowers the kernel tier; QVL_THREADS sets the pool size (default:
// one per core). Per-core peaks of a Zen 4 at 3.64 GHz (one 512-bit vpdpbusd, vdpbf16ps
// or vfmadd per cycle): int8 466 GOP/s, bf16 233 GFLOP/s, f32 116 GFLOP/s.
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <time.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "ops/activation.h"
#include "ops/linear.h"
#include "ops/packed_kernels.h"
#include "ops/weight_pack.h"

namespace qvl {
namespace {

ThreadPool& Pool() {
  static ThreadPool* pool = [] {
    const char* env = std::getenv("QVL_THREADS");
    return new ThreadPool(env ? std::atoi(env) : 0);
  }();
  return *pool;
}

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void SetRates(benchmark::State& state, double flops, double bytes, double cpu_seconds) {
  const double calls = static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(flops * calls / 1e9, benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(bytes * calls / 1e9, benchmark::Counter::kIsRate);
  state.counters["cpu_GFLOP/s"] = flops * calls / 1e9 / cpu_seconds;
  state.counters["cpu_GB/s"] = bytes * calls / 1e9 / cpu_seconds;
}

// Weights are made once per (format, N, K) and kept, so runs only time the matmul.
const LinearWeight& Weight(WeightFormat format, int64_t n, int64_t k) {
  static std::map<std::tuple<int, int64_t, int64_t>, std::unique_ptr<LinearWeight>> cache;
  static std::map<std::pair<int64_t, int64_t>, std::vector<uint16_t>> sources;
  auto& slot = cache[{static_cast<int>(format), n, k}];
  if (!slot) {
    auto& src = sources[{n, k}];
    if (src.empty()) {
      std::mt19937 rng(1);
      std::normal_distribution<float> dist(0.0f, 0.02f);
      src.resize(n * k);
      for (uint16_t& v : src) v = F32ToBf16(dist(rng));
    }
    slot = std::make_unique<LinearWeight>(
        LinearWeight::Prepare({DType::kBF16, n, k, src.data()}, format, &Pool()));
  }
  return *slot;
}

void BM_MatMul(benchmark::State& state, WeightFormat format) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const LinearWeight& w = Weight(format, n, k);
  std::vector<float> x(m * k), y(m * n);
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    MatMul(x.data(), m, w, nullptr, y.data(), MatmulPrecision::kBF16, Pool());
    benchmark::DoNotOptimize(y.data());
  }
  SetRates(state, 2.0 * m * n * k, static_cast<double>(w.bytes()), ThreadCpuSeconds() - cpu0);
}

// The q8 / q4 activation quantizer of the active tier alone, on the main thread, over
// {M, K}: a vision fc2 input (3072 x 4096, 50 MB, read from memory as after the matmul
// that wrote it) and a prefill down-projection input (512 x 6144). GB/s of x read.
void BM_QuantizeRows(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), blocks = k / kQuantBlock;
  std::vector<float> x(m * k), factors(m * blocks), exps(m * blocks), row_scales(m);
  std::vector<int8_t> codes(m * k);
  std::vector<int32_t> corr(m * blocks);
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  const kernels::QuantizedRows q{codes.data(), factors.data(),    exps.data(),
                                 corr.data(),  row_scales.data(), k};
  const kernels::PackedKernels kern = kernels::PackedKernelsFor(ActiveTier());
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    kern.quantize(x.data(), k, m, k, q);
    benchmark::DoNotOptimize(codes.data());
  }
  SetRates(state, 0, 4.0 * m * k, ThreadCpuSeconds() - cpu0);
}
BENCHMARK(BM_QuantizeRows)
    ->ArgNames({"M", "K"})
    ->Args({3072, 4096})
    ->Args({512, 6144})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Packing one 2048 x 6144 bf16 weight (a text gate or up projection) on the main thread:
// the first start's work per weight. GB/s of bf16 read.
void BM_PackPanels(benchmark::State& state, WeightFormat format) {
  const int64_t n = 6144, k = 2048;
  std::vector<uint16_t> src(n * k);
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  for (uint16_t& v : src) v = F32ToBf16(dist(rng));
  const WeightView view{DType::kBF16, n, k, src.data()};
  const PackedLayout layout = PackedLayoutFor(format, n, k);
  std::vector<uint8_t> dst(layout.bytes());
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    PackPanels(view, format, 0, layout.panels, dst.data());
    benchmark::DoNotOptimize(dst.data());
  }
  SetRates(state, 0, 2.0 * n * k, ThreadCpuSeconds() - cpu0);
}
BENCHMARK_CAPTURE(BM_PackPanels, q8, WeightFormat::kQ8)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PackPanels, q4, WeightFormat::kQ4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// A text MLP's down projection at prefill (K = 6144, N = 2048, q8; M = 512, and 3072 for a
// large image's prompt) after its SwiGLU: SiluMul then MatMulAdd (fused = 0), or
// MatMulAddSwiGlu (fused = 1), which forms the product row by row as it converts the input.
void BM_SwiGluDown(benchmark::State& state) {
  const int64_t m = state.range(0), k = 6144, n = 2048;
  const bool fused = state.range(1) != 0;
  const LinearWeight& w = Weight(WeightFormat::kQ8, n, k);
  std::vector<float> gate(m * k), up(m * k), product(m * k), y(m * n, 0.0f);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : gate) v = dist(rng);
  for (float& v : up) v = dist(rng);
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    if (fused) {
      MatMulAddSwiGlu(gate.data(), up.data(), m, w, nullptr, y.data(), MatmulPrecision::kBF16,
                      Pool());
    } else {
      SiluMul(gate.data(), up.data(), m * k, product.data(), &Pool());
      MatMulAdd(product.data(), m, w, nullptr, y.data(), MatmulPrecision::kBF16, Pool());
    }
    benchmark::DoNotOptimize(y.data());
  }
  SetRates(state, 2.0 * m * n * k, static_cast<double>(w.bytes()), ThreadCpuSeconds() - cpu0);
}
BENCHMARK(BM_SwiGluDown)
    ->ArgNames({"M", "fused"})
    ->Args({512, 0})
    ->Args({512, 1})
    ->Args({3072, 0})
    ->Args({3072, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Four layers of distinct text-decoder weights (~200 M), far more than the caches hold:
// one pass reads every byte from memory, as a decode step does.
constexpr int kStackLayers = 4;
const std::vector<std::pair<int64_t, int64_t>> kLayerShapes = {
    {2048, 2048}, {2048, 1024}, {2048, 1024}, {2048, 2048},
    {2048, 6144}, {2048, 6144}, {6144, 2048}};

const std::vector<LinearWeight>& LayerStack(WeightFormat format) {
  static std::map<int, std::vector<LinearWeight>> stacks;
  static std::vector<std::vector<uint16_t>> sources;
  if (sources.empty()) {
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 0.02f);
    for (int l = 0; l < kStackLayers; ++l) {
      for (const auto& [k, n] : kLayerShapes) {
        sources.emplace_back(n * k);
        for (uint16_t& v : sources.back()) v = F32ToBf16(dist(rng));
      }
    }
  }
  std::vector<LinearWeight>& stack = stacks[static_cast<int>(format)];
  if (stack.empty()) {
    for (size_t i = 0; i < sources.size(); ++i) {
      const auto& [k, n] = kLayerShapes[i % kLayerShapes.size()];
      stack.push_back(
          LinearWeight::Prepare({DType::kBF16, n, k, sources[i].data()}, format, &Pool()));
    }
  }
  return stack;
}

void BM_DecodeStep(benchmark::State& state, WeightFormat format) {
  const int64_t m = state.range(0);
  const std::vector<LinearWeight>& stack = LayerStack(format);
  std::vector<float> x(m * 6144), y(m * 6144);
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  double flops = 0, bytes = 0;
  for (const LinearWeight& w : stack) {
    flops += 2.0 * m * w.rows() * w.cols();
    bytes += static_cast<double>(w.bytes());
  }
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    for (const LinearWeight& w : stack) {
      MatMul(x.data(), m, w, nullptr, y.data(), MatmulPrecision::kBF16, Pool());
    }
    benchmark::DoNotOptimize(y.data());
  }
  SetRates(state, flops, bytes, ThreadCpuSeconds() - cpu0);
}

// XOR of the 64-bit words of [begin, end): eight independent lanes, so the loop is
// load-bound (vectorized at any tier).
uint64_t XorWords(const uint64_t* begin, const uint64_t* end) {
  uint64_t acc[8] = {};
  for (const uint64_t* p = begin; p + 8 <= end; p += 8) {
    for (int l = 0; l < 8; ++l) acc[l] ^= p[l];
  }
  uint64_t x = 0;
  for (uint64_t a : acc) x ^= a;
  return x;
}

void BM_ReadProbe(benchmark::State& state) {
  const size_t bytes = size_t{512} << 20;
  void* raw = std::aligned_alloc(size_t{2} << 20, bytes);
  ::madvise(raw, bytes, MADV_HUGEPAGE);
  uint64_t* buf = static_cast<uint64_t*>(raw);
  for (size_t i = 0; i < bytes / 8; ++i) buf[i] = i * 0x9e3779b97f4a7c15ull;
  ThreadPool& pool = Pool();
  const int64_t words = static_cast<int64_t>(bytes / 8 / pool.size() / 8 * 8);
  std::vector<uint64_t> sink(pool.size());
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    pool.RunOnAll([&](int t) { sink[t] ^= XorWords(buf + t * words, buf + (t + 1) * words); });
  }
  SetRates(state, 0, static_cast<double>(words * 8 * pool.size()), ThreadCpuSeconds() - cpu0);
  benchmark::DoNotOptimize(sink.data());
  std::free(raw);
}
BENCHMARK(BM_ReadProbe)->UseRealTime()->Unit(benchmark::kMillisecond);

// {K, N}: text q/o, k/v, gate/up, down; vision qkv, fc1, fc2.
const std::vector<std::pair<int64_t, int64_t>> kTextShapes = {
    {2048, 2048}, {2048, 1024}, {2048, 6144}, {6144, 2048}};
const std::vector<std::pair<int64_t, int64_t>> kVisionShapes = {
    {1024, 3072}, {1024, 4096}, {4096, 1024}};

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (int64_t m : {1, 4, 8, 512}) {
    for (const auto& [k, n] : kTextShapes) b->Args({m, k, n});
  }
  b->Args({1, 2048, 151936});  // lm_head
  for (const auto& [k, n] : kVisionShapes) b->Args({3072, k, n});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void DecodeShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M"})->Arg(1)->Arg(2)->Arg(4)->Arg(5)->Arg(8)->Arg(16)->Arg(32)->UseRealTime()->Unit(
      benchmark::kMillisecond);
}
BENCHMARK_CAPTURE(BM_DecodeStep, bf16, WeightFormat::kBF16)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_DecodeStep, bf16_packed, WeightFormat::kBF16Packed)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_DecodeStep, q8, WeightFormat::kQ8)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_DecodeStep, q4, WeightFormat::kQ4)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_DecodeStep, w8a8, WeightFormat::kW8A8)->Apply(DecodeShapes);

BENCHMARK_CAPTURE(BM_MatMul, bf16, WeightFormat::kBF16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatMul, bf16_packed, WeightFormat::kBF16Packed)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatMul, q8, WeightFormat::kQ8)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatMul, q4, WeightFormat::kQ4)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatMul, w8a8, WeightFormat::kW8A8)->Apply(Shapes);

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
