#include "ops/norm.h"

#include <cmath>

namespace qvl {

void RmsNorm(const float* x, const float* w, int64_t rows, int64_t dim, int64_t stride, float eps,
             float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    float* yr = y + r * stride;
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(xr[i]) * xr[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(sum / dim) + eps);
    for (int64_t i = 0; i < dim; ++i) yr[i] = w[i] * (xr[i] * inv);
  }
}

void LayerNorm(const float* x, const float* w, const float* b, int64_t rows, int64_t dim, float eps,
               float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += xr[i];
    const double mean = sum / dim;
    double var = 0.0;
    for (int64_t i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.0f / std::sqrt(static_cast<float>(var / dim) + eps);
    const float meanf = static_cast<float>(mean);
    for (int64_t i = 0; i < dim; ++i) yr[i] = (xr[i] - meanf) * inv * w[i] + b[i];
  }
}

}  // namespace qvl
