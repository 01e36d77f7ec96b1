#include "ops/linear.h"

#include <algorithm>
#include <cstring>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "ops/matmul_kernels.h"

namespace qvl {
namespace {

const kernels::MatMulKernels& Kernels() {
  static const kernels::MatMulKernels k = kernels::MatMulKernelsFor(ActiveTier());
  return k;
}

// Scratch for activations converted to bf16; grows to the largest call, then is reused,
// so steady-state forward passes do not allocate.
std::vector<uint16_t>& Bf16Scratch(size_t n) {
  thread_local std::vector<uint16_t> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer;
}

float DecodeElement(const WeightView& v, int64_t i) {
  switch (v.dtype) {
    case DType::kF32:
      return static_cast<const float*>(v.data)[i];
    case DType::kBF16:
      return Bf16ToF32(static_cast<const uint16_t*>(v.data)[i]);
    case DType::kF16:
      return F16ToF32(static_cast<const uint16_t*>(v.data)[i]);
    default:
      Fail(ErrorCode::kInvalidArgument, "weight of dtype ", DTypeName(v.dtype),
           " cannot be used in a linear layer");
  }
}

}  // namespace

const char* WeightFormatName(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBF16:
      return "bf16";
  }
  return "?";
}

LinearWeight LinearWeight::Prepare(const WeightView& view, WeightFormat format) {
  LinearWeight w;
  w.format_ = format;
  w.rows_ = view.rows;
  w.cols_ = view.cols;
  const bool in_place = (format == WeightFormat::kF32 && view.dtype == DType::kF32) ||
                        (format == WeightFormat::kBF16 && view.dtype == DType::kBF16);
  if (in_place) {
    w.data_ = view.data;
    return w;
  }
  const int64_t n = view.rows * view.cols;
  if (format == WeightFormat::kF32) {
    w.owned_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n) * 4);
    float* dst = reinterpret_cast<float*>(w.owned_->data());
    for (int64_t i = 0; i < n; ++i) dst[i] = DecodeElement(view, i);
  } else {
    w.owned_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n) * 2);
    uint16_t* dst = reinterpret_cast<uint16_t*>(w.owned_->data());
    for (int64_t i = 0; i < n; ++i) dst[i] = F32ToBf16(DecodeElement(view, i));
  }
  w.data_ = w.owned_->data();
  return w;
}

size_t LinearWeight::bytes() const {
  const size_t elem = format_ == WeightFormat::kF32 ? 4 : 2;
  return static_cast<size_t>(rows_ * cols_) * elem;
}

void MatMul(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
            MatmulPrecision precision, ThreadPool& pool) {
  const int64_t n = w.rows();
  const int64_t k = w.cols();
  if (m <= 0 || n <= 0) return;
  const kernels::MatMulKernels& kern = Kernels();

  if (precision == MatmulPrecision::kBF16 && w.format() != WeightFormat::kBF16) {
    Fail(ErrorCode::kInvalidArgument, "bf16 matmul precision needs bf16 weights, got ",
         WeightFormatName(w.format()));
  }
  const uint16_t* xb = nullptr;
  if (precision == MatmulPrecision::kBF16) {
    std::vector<uint16_t>& scratch = Bf16Scratch(static_cast<size_t>(m * k));
    uint16_t* dst = scratch.data();
    pool.ParallelFor(m, 16, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin * k; i < end * k; ++i) dst[i] = F32ToBf16(x[i]);
    });
    xb = dst;
  }

  // Blocks of output columns (weight rows), enough for every thread to stay busy; each
  // block walks all rows of x so its weights stay in cache.
  const int64_t target_tasks = static_cast<int64_t>(pool.size()) * 8;
  const int64_t block = std::clamp<int64_t>((n + target_tasks - 1) / target_tasks, 4, 256);
  const int64_t m_chunk = 64;
  pool.ParallelFor(n, block, [&](int64_t j0, int64_t j1, int) {
    const float* b = bias ? bias + j0 : nullptr;
    for (int64_t i0 = 0; i0 < m; i0 += m_chunk) {
      const int64_t mi = std::min(m_chunk, m - i0);
      float* yt = y + i0 * n + j0;
      if (xb != nullptr) {
        kern.bf16(xb + i0 * k, k, mi, static_cast<const uint16_t*>(w.data()) + j0 * k, k, j1 - j0,
                  k, b, yt, n);
      } else if (w.format() == WeightFormat::kF32) {
        kern.f32(x + i0 * k, k, mi, static_cast<const float*>(w.data()) + j0 * k, k, j1 - j0, k, b,
                 yt, n);
      } else {
        kern.bf16w(x + i0 * k, k, mi, static_cast<const uint16_t*>(w.data()) + j0 * k, k, j1 - j0,
                   k, b, yt, n);
      }
    }
  });
}

}  // namespace qvl
