// NEON MatMul tile kernels: 8 lanes of K per step in two registers (see ops/matmul_simd.h),
// so the 4 x 2 tile keeps 16 of the 32 registers as accumulators.
#include "ops/matmul_simd.h"
#include "ops/simd_neon.h"

namespace qvl::kernels {

MatMulKernels NeonMatMulKernels() { return MatMulKernelsOf<Neon>(); }

}  // namespace qvl::kernels
