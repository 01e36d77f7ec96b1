// A weight matrix as stored in a checkpoint, used in place (usually inside an mmap):
// row-major [rows, cols] = [out_features, in_features], dtype F32, BF16 or F16.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace qvl {

struct WeightView {
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
};

}  // namespace qvl
