// AVX2 + FMA MatMul tile kernels: 8 lanes of K per step (see ops/matmul_simd.h).
#include "ops/matmul_simd.h"
#include "ops/simd_avx2.h"

namespace qvl::kernels {

MatMulKernels Avx2MatMulKernels() { return MatMulKernelsOf<Avx2>(); }

}  // namespace qvl::kernels
