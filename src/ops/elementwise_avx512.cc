// AVX-512 element-wise kernels: 16 lanes, masked tails (see ops/elementwise_simd.h).
#include "ops/elementwise_simd.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {

ElementwiseKernels Avx512ElementwiseKernels() { return ElementwiseKernelsOf<Avx512>(); }

}  // namespace qvl::kernels
