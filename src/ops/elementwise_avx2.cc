// AVX2 + FMA element-wise kernels: 8 lanes, masked tails (see ops/elementwise_simd.h).
#include "ops/elementwise_simd.h"
#include "ops/simd_avx2.h"

namespace qvl::kernels {

ElementwiseKernels Avx2ElementwiseKernels() { return ElementwiseKernelsOf<Avx2>(); }

}  // namespace qvl::kernels
