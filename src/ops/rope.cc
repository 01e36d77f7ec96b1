#include "ops/rope.h"

#include "ops/elementwise_kernels.h"

namespace qvl {
namespace {

constexpr int64_t kParallelElements = 1 << 15;

void RotateHeads(float* x, const float* w, float eps, int64_t tokens, int heads, int head_dim,
                 int64_t stride, const float* cos, const float* sin, ThreadPool* pool) {
  const auto& k = kernels::ActiveElementwiseKernels();
  const int half = head_dim / 2;
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      for (int h = 0; h < heads; ++h) {
        k.rope_head(x + t * stride + static_cast<int64_t>(h) * head_dim, half, cos + t * half,
                    sin + t * half, w, eps);
      }
    }
  };
  const int64_t work = tokens * heads * head_dim;
  if (pool == nullptr || work < kParallelElements) {
    run(0, tokens);
    return;
  }
  const int64_t grain = kParallelElements / 4 / (heads * head_dim) + 1;
  pool->ParallelFor(tokens, grain, [&](int64_t b, int64_t e, int) { run(b, e); });
}

}  // namespace

void ApplyRope(float* x, int64_t tokens, int heads, int head_dim, int64_t stride, const float* cos,
               const float* sin, ThreadPool* pool) {
  RotateHeads(x, nullptr, 0.0f, tokens, heads, head_dim, stride, cos, sin, pool);
}

void RmsNormRope(float* x, const float* w, float eps, int64_t tokens, int heads, int head_dim,
                 int64_t stride, const float* cos, const float* sin, ThreadPool* pool) {
  RotateHeads(x, w, eps, tokens, heads, head_dim, stride, cos, sin, pool);
}

}  // namespace qvl
