// Element-wise activations, in place or into a separate output.
#pragma once

#include <cstdint>

namespace qvl {

// gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Vision block MLPs.
void GeluTanh(float* x, int64_t n);

// Exact GELU: 0.5 x (1 + erf(x / sqrt(2))). The vision mergers.
void GeluErf(float* x, int64_t n);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)). The text MLP (SwiGLU).
void SiluMul(const float* gate, const float* up, int64_t n, float* out);

// y[i] += x[i].
void AddInPlace(float* y, const float* x, int64_t n);

}  // namespace qvl
