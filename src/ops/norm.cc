#include "ops/norm.h"

#include <cmath>

#include "ops/elementwise_kernels.h"

namespace qvl {
namespace {

// Below this many elements a call runs on the caller's thread: waking the pool would cost
// more than the work (a decode step's norms are a few thousand floats).
constexpr int64_t kParallelElements = 1 << 15;

template <typename Fn>
void ForRows(int64_t rows, int64_t dim, ThreadPool* pool, const Fn& fn) {
  if (pool == nullptr || rows * dim < kParallelElements) {
    fn(0, rows);
    return;
  }
  const int64_t grain = kParallelElements / 4 / dim > 0 ? kParallelElements / 4 / dim : 1;
  pool->ParallelFor(rows, grain, [&](int64_t b, int64_t e, int) { fn(b, e); });
}

}  // namespace

void RmsNorm(const float* x, const float* w, int64_t rows, int64_t dim, int64_t stride, float eps,
             float* y, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForRows(rows, dim, pool, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) k.rms_norm_row(x + r * stride, w, dim, eps, y + r * stride);
  });
}

void LayerNorm(const float* x, const float* w, const float* b, int64_t rows, int64_t dim, float eps,
               float* y, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  ForRows(rows, dim, pool, [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) k.layer_norm_row(x + r * dim, w, b, dim, eps, y + r * dim);
  });
}

void ScaleToUnitLength(std::span<float> v) {
  double squares = 0;
  for (const float x : v) squares += static_cast<double>(x) * x;
  if (!(squares > 0)) return;
  const float scale = static_cast<float>(1.0 / std::sqrt(squares));
  for (float& x : v) x *= scale;
}

}  // namespace qvl
