#include "ops/activation.h"

#include <cmath>

#include "ops/elementwise_kernels.h"

namespace qvl {
namespace {

// Chunks of this many elements (a multiple of every vector width); smaller calls run on
// the caller's thread.
constexpr int64_t kChunk = 1 << 14;

template <typename Fn>
void ForChunks(int64_t n, ThreadPool* pool, const Fn& fn) {
  if (pool == nullptr || n < 2 * kChunk) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, kChunk, [&](int64_t b, int64_t e, int) { fn(b, e); });
}

}  // namespace

void GeluTanh(float* x, int64_t n, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForChunks(n, pool, [&](int64_t b, int64_t e) { k.gelu_tanh(x + b, e - b); });
}

void GeluErf(float* x, int64_t n, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForChunks(n, pool, [&](int64_t b, int64_t e) { k.gelu_erf(x + b, e - b); });
}

void SiluMul(const float* gate, const float* up, int64_t n, float* out, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForChunks(n, pool, [&](int64_t b, int64_t e) { k.silu_mul(gate + b, up + b, e - b, out + b); });
}

void AddInPlace(float* y, const float* x, int64_t n, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForChunks(n, pool, [&](int64_t b, int64_t e) { k.add(y + b, x + b, e - b); });
}

float LogSumExp(const float* x, int64_t n) {
  const auto& k = kernels::ActiveElementwiseKernels();
  const float largest = k.max_of(x, n);
  return largest + std::log(k.sum_exp(x, n, largest));
}

}  // namespace qvl
