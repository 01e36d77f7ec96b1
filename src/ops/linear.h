// Linear layers: y[M, N] = x[M, K] . W[N, K]^T + b[N], the bulk of every forward pass.
//
// A LinearWeight is a weight matrix in the layout the kernels read. F32 and BF16
// checkpoint matrices are used in place (zero copy from the mmap); other formats are
// converted once at load.
//
// Precision: kF32 computes in float32 with the weights decoded exactly (bf16 -> f32 is
// exact), matching the float32 reference. kBF16 rounds the activations x to bf16 before
// the products (accumulation stays f32), as the reference does in bfloat16.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/dtype.h"
#include "base/thread_pool.h"
#include "ops/weight_view.h"

namespace qvl {

enum class WeightFormat : uint8_t {
  kF32,   // row-major [N, K] float
  kBF16,  // row-major [N, K] bfloat16
};

const char* WeightFormatName(WeightFormat format);

enum class MatmulPrecision : uint8_t {
  kF32,
  kBF16,
};

class LinearWeight {
 public:
  LinearWeight() = default;

  // Uses `view` in place when its dtype is `format`; otherwise converts it once into
  // owned memory (F16 -> F32 or BF16, F32 -> BF16, BF16 -> F32).
  static LinearWeight Prepare(const WeightView& view, WeightFormat format);

  WeightFormat format() const { return format_; }
  int64_t rows() const { return rows_; }  // N, output features
  int64_t cols() const { return cols_; }  // K, input features
  const void* data() const { return data_; }
  bool empty() const { return data_ == nullptr; }
  // Bytes this weight occupies (in the mmap or owned).
  size_t bytes() const;
  // Bytes owned by this object (0 when used in place).
  size_t owned_bytes() const { return owned_ ? owned_->size() : 0; }

 private:
  WeightFormat format_ = WeightFormat::kF32;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  const void* data_ = nullptr;
  std::shared_ptr<std::vector<uint8_t>> owned_;
};

// y[M, N] = x[M, K] . W^T (+ bias[N] when not null). x rows are K apart, y rows N apart.
// Work is split over the pool's threads.
void MatMul(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
            MatmulPrecision precision, ThreadPool& pool);

}  // namespace qvl
