// The vector layer of the SIMD kernel tiers (internal to ops/). A tier header
// (simd_avx2.h, simd_avx512.h, simd_neon.h) specializes Simd<T> for its tag type T with its native
// float vector V and the same static functions (loads with a tail count, arithmetic,
// fused multiply-adds, reductions); code written once as a template over T
// (simd_math.h, elementwise_simd.h) is then instantiated in each tier's file, compiled
// with that tier's target flags. Everything here has internal linkage, so files built
// with different flags never share a copy of a function. (Tags rather than the vector
// types themselves: GCC drops a vector type's attributes from template arguments.)
#pragma once

namespace qvl::kernels {
namespace {

template <class T>
struct Simd;

template <class T>
using Vec = typename Simd<T>::V;

}  // namespace
}  // namespace qvl::kernels
