#include "ops/rope.h"

namespace qvl {

void ApplyRope(float* x, int64_t tokens, int heads, int head_dim, int64_t stride, const float* cos,
               const float* sin) {
  const int half = head_dim / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* c = cos + t * half;
    const float* s = sin + t * half;
    for (int h = 0; h < heads; ++h) {
      float* v = x + t * stride + static_cast<int64_t>(h) * head_dim;
      for (int i = 0; i < half; ++i) {
        const float a = v[i];
        const float b = v[i + half];
        v[i] = a * c[i] - b * s[i];
        v[i + half] = b * c[i] + a * s[i];
      }
    }
  }
}

}  // namespace qvl
