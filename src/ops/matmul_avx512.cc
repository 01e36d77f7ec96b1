// AVX-512 MatMul tile kernels: 16 lanes of K per step (see ops/matmul_simd.h).
#include "ops/matmul_simd.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {

MatMulKernels Avx512MatMulKernels() { return MatMulKernelsOf<Avx512>(); }

}  // namespace qvl::kernels
