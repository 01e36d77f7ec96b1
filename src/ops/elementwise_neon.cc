// NEON element-wise kernels: 8 lanes in two registers, copied tails (see
// ops/elementwise_simd.h).
#include "ops/elementwise_simd.h"
#include "ops/simd_neon.h"

namespace qvl::kernels {

ElementwiseKernels NeonElementwiseKernels() { return ElementwiseKernelsOf<Neon>(); }

}  // namespace qvl::kernels
