// Linear layers: y[M, N] = x[M, K] . W[N, K]^T + b[N], the bulk of every forward pass.
//
// A LinearWeight is a weight matrix in one of the layouts of ops/weight_format.h. F32
// and BF16 checkpoint matrices can be used in place (zero copy from the mmap); packed
// formats are made once (at load, or read from a cache file) and then used read-only.
//
// Precision: kF32 weights compute in float32 (bf16 -> f32 is exact), matching the
// float32 reference. With kBF16 precision, BF16 weights see x rounded to bf16 (as the
// reference does in bfloat16); kBF16Packed always does. kQ8 / kQ4 weights see x
// quantized to int8 per block of 32, kW8A8 weights x rotated and quantized to int8 per row
// (see ops/packed_kernels.h).
//
// Batch invariance: a row of y depends only on its row of x and the weight, bit for bit,
// whatever M is and however the work is split over threads. The server relies on it: a
// sequence decoded alone or in a batch, or prefilled in chunks, gives the same logits.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/thread_pool.h"
#include "ops/weight_format.h"
#include "ops/weight_view.h"

namespace qvl {

enum class MatmulPrecision : uint8_t {
  kF32,
  kBF16,
};

class LinearWeight {
 public:
  LinearWeight() = default;

  // Uses `view` in place when its dtype is the row-major `format`; otherwise converts
  // it once into owned memory (packing and quantizing panels over `pool` when given).
  static LinearWeight Prepare(const WeightView& view, WeightFormat format,
                              ThreadPool* pool = nullptr);
  // Whether Prepare uses `view` in place for `format`: otherwise the view's data is not
  // read again once the weight is prepared.
  static bool InPlace(const WeightView& view, WeightFormat format);

  // A packed weight made earlier (e.g. mapped from a cache file): `data` holds
  // PackedLayoutFor(format, rows, cols).bytes() bytes, 64-byte aligned; `keep_alive`
  // owns the memory behind it.
  static LinearWeight FromPacked(WeightFormat format, int64_t rows, int64_t cols, const void* data,
                                 std::shared_ptr<const void> keep_alive);

  WeightFormat format() const { return format_; }
  int64_t rows() const { return rows_; }  // N, output features
  int64_t cols() const { return cols_; }  // K, input features
  const void* data() const { return data_; }
  bool empty() const { return data_ == nullptr; }
  // Bytes this weight occupies (in the mmap or owned).
  size_t bytes() const;
  // Bytes owned by this object (0 when used in place or mapped).
  size_t owned_bytes() const { return owned_bytes_; }

 private:
  WeightFormat format_ = WeightFormat::kF32;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  const void* data_ = nullptr;
  size_t owned_bytes_ = 0;
  std::shared_ptr<const void> keep_alive_;
};

// The norm a layer applies to each row of a matmul's input (its pre-norm): RMSNorm
// without b, LayerNorm with it (ops/norm.h). Given to a matmul, each row is normalized as
// the packed formats convert it, so the normalized activations never go through memory;
// the results are bit for bit the norm followed by the matmul.
struct InputNorm {
  const float* w = nullptr;
  const float* b = nullptr;
  float eps = 0.0f;
};

// y[M, N] = x[M, K] . W^T (+ bias[N] when not null), x's rows normalized first when
// `norm` is given. x rows are K apart, y rows N apart. Work is split over the pool's
// threads. `precision` matters for F32 / BF16 weights only.
void MatMul(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
            MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm = nullptr);

// One weight of MatMuls and where its product goes: y = x . W^T (+ bias when not null).
struct MatMulOutput {
  const LinearWeight* w;
  const float* bias;
  float* y;
};

// MatMul for several weights that read the same x (a layer's q, k and v; gate and up).
// Packed weights of one format and depth (at most four) share one conversion of x and
// one parallel pass over all their panels; results are bit for bit the separate MatMuls'.
void MatMuls(const float* x, int64_t m, std::span<const MatMulOutput> outs,
             MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm = nullptr);

// Rows of x one pass over a packed weight's panels serves on this CPU (the active
// kernels' row tile): a matmul bound by reading the weights (decode) costs about the same
// for 1 to this many rows. 1 for row-major F32 / BF16 weights, whose kernels cost per row.
int64_t RowsPerWeightRead(WeightFormat format);

// y[M, N] += x[M, K] . W^T (+ bias): a residual add folded into the matmul's stores (for
// the packed formats), so the product never makes a round trip through memory. Bit for
// bit the same as MatMul into a temporary t followed by y[i] = y[i] + t[i].
void MatMulAdd(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
               MatmulPrecision precision, ThreadPool& pool);

// y[M, N] += (silu(gate) * up) . W^T (+ bias), gate and up [M, K] (a text MLP's down
// projection, SwiGLU): for the packed formats each row of the product is formed as the
// matmul converts its input, never stored. Bit for bit SiluMul (ops/activation.h)
// followed by MatMulAdd.
void MatMulAddSwiGlu(const float* gate, const float* up, int64_t m, const LinearWeight& w,
                     const float* bias, float* y, MatmulPrecision precision, ThreadPool& pool);

// y = gelu_tanh(x . W^T + bias) (a vision MLP's fc1): for the packed formats GELU runs on
// each block of y as soon as it is stored, while it is in cache, instead of in a pass over
// memory after the matmul. Bit for bit MatMul followed by GeluTanh (ops/activation.h).
void MatMulGeluTanh(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
                    MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm = nullptr);

// Rotary embedding of a matmul's output: the first `heads` heads of each row (head_dim
// columns each, from column 0) rotate as ApplyRope does, with cos and sin [m, head_dim/2].
struct OutputRope {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int heads = 0;
  int head_dim = 0;
};

// y = x . W^T + bias, its first heads rotated (a vision block's q and k in its qkv): for
// the packed formats on each block of y as soon as it is stored, while it is in cache,
// instead of in a pass over memory after the matmul. Bit for bit MatMul followed by
// ApplyRope (ops/rope.h).
void MatMulRope(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
                const OutputRope& rope, MatmulPrecision precision, ThreadPool& pool,
                const InputNorm* norm = nullptr);

}  // namespace qvl
