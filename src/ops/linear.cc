#include "ops/linear.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "base/large_buffer.h"
#include "ops/activation.h"
#include "ops/elementwise_kernels.h"
#include "ops/matmul_kernels.h"
#include "ops/norm.h"
#include "ops/packed_kernels.h"
#include "ops/rope.h"
#include "ops/weight_pack.h"

namespace qvl {
namespace {

const kernels::MatMulKernels& Kernels() {
  static const kernels::MatMulKernels k = kernels::MatMulKernelsFor(ActiveTier());
  return k;
}

const kernels::PackedKernels& Packed() {
  static const kernels::PackedKernels k = kernels::PackedKernelsFor(ActiveTier());
  return k;
}

// Per-call scratch for converted activations: grows to the largest call, then is reused,
// so steady-state forward passes do not allocate. Only the dispatching thread writes it.
template <typename T>
T* Scratch(LargeVector<T>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// Large weights go on 2 MiB pages (AllocateLarge): decode streams every weight once per
// token, and with 4 KiB pages the TLB misses cost about half the bandwidth.
std::shared_ptr<uint8_t> AllocateAligned(size_t bytes) {
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(AllocateLarge(bytes, "weight")),
                                  [](uint8_t* q) { FreeLarge(q); });
}

void RowMajorMatMul(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
                    MatmulPrecision precision, ThreadPool& pool) {
  const int64_t n = w.rows();
  const int64_t k = w.cols();
  const kernels::MatMulKernels& kern = Kernels();
  if (precision == MatmulPrecision::kBF16 && w.format() != WeightFormat::kBF16) {
    Fail(ErrorCode::kInvalidArgument, "bf16 matmul precision needs bf16 weights, got ",
         WeightFormatName(w.format()));
  }
  const uint16_t* xb = nullptr;
  if (precision == MatmulPrecision::kBF16) {
    thread_local LargeVector<uint16_t> buffer;
    uint16_t* dst = Scratch(buffer, static_cast<size_t>(m * k));
    pool.ParallelFor(m, 16, [&](int64_t begin, int64_t end, int) {
      kernels::ActiveElementwiseKernels().to_bf16(x + begin * k, (end - begin) * k,
                                                  dst + begin * k);
    });
    xb = dst;
  }
  // Blocks of output columns (weight rows), enough for every thread to stay busy; each
  // block walks all rows of x so its weights stay in cache.
  const int64_t target_tasks = static_cast<int64_t>(pool.size()) * 8;
  const int64_t block = std::clamp<int64_t>((n + target_tasks - 1) / target_tasks, 4, 256);
  const int64_t m_chunk = 64;
  pool.ParallelFor(n, block, [&](int64_t j0, int64_t j1, int) {
    const float* b = bias ? bias + j0 : nullptr;
    for (int64_t i0 = 0; i0 < m; i0 += m_chunk) {
      const int64_t mi = std::min(m_chunk, m - i0);
      float* yt = y + i0 * n + j0;
      if (xb != nullptr) {
        kern.bf16(xb + i0 * k, k, mi, static_cast<const uint16_t*>(w.data()) + j0 * k, k, j1 - j0,
                  k, b, yt, n);
      } else if (w.format() == WeightFormat::kF32) {
        kern.f32(x + i0 * k, k, mi, static_cast<const float*>(w.data()) + j0 * k, k, j1 - j0, k, b,
                 yt, n);
      } else {
        kern.bf16w(x + i0 * k, k, mi, static_cast<const uint16_t*>(w.data()) + j0 * k, k, j1 - j0,
                   k, b, yt, n);
      }
    }
  });
}

// Panels per task: few rows of x stream the weights from memory, so each thread takes
// long contiguous runs; many rows are compute-bound, so tasks are small for balance.
int64_t PanelGrain(int64_t panels, int64_t m, int threads) {
  const int64_t tasks = threads * (m <= 8 ? 2 : 16);
  return std::max<int64_t>(1, (panels + tasks - 1) / tasks);
}

// Weights of one call: a layer's q, k and v, or its gate and up.
constexpr size_t kMaxPackedOutputs = 4;

// What a packed matmul does with its products: store them, add them to y (a residual),
// or store them through GELU-tanh (a vision MLP's fc1), applied to each task's block of y
// while it is still in cache.
enum class Store { kPlain, kAccumulate, kGeluTanh };

// A multiple of every tier's row tile (2, 4, 6; AMX 32): the unit of a task's rows, and
// the rows GELU follows the kernel by (their products, at most a panel group of ~1000
// columns wide, stay in L2).
constexpr int64_t kRowUnit = 96;

// The rows a packed matmul converts: x's, or formed from x one row at a time as they are
// converted, so they never go through memory: silu(x) * up (SwiGLU) with `up`, x's rows
// normalized with `norm`.
struct Input {
  const float* x;
  const float* up = nullptr;
  const InputNorm* norm = nullptr;
};

// y_o = x . W_o^T (+ bias_o), stored as `store` says, for weights of one packed format and
// depth: x is converted once for all of them, and one parallel pass covers every
// weight's panels. With `rope` (one weight, head_dim a multiple of kPanelRows), each
// task's columns hold whole heads and rotate as they are stored.
void PackedMatMuls(const Input& in, int64_t m, std::span<const MatMulOutput> outs, Store store,
                   ThreadPool& pool, const OutputRope* rope = nullptr) {
  const WeightFormat format = outs[0].w->format();
  const int64_t k = outs[0].w->cols();
  const int64_t kp = PackedLayoutFor(format, outs[0].w->rows(), k).padded_k;
  const kernels::PackedKernels& kern = Packed();
  // Converting a row of x takes about a microsecond, as long as waking the pool: decode's
  // few rows are converted on the calling thread.
  const int64_t row_grain = std::max<int64_t>(16, m / (pool.size() * 4));
  // Calls convert(rows, i, count) for input rows [begin, end) (`count` rows from row i,
  // k apart): x's rows as they are, or each row formed in a per-thread buffer.
  const auto for_input_rows = [&](int64_t begin, int64_t end, const auto& convert) {
    if (in.up == nullptr && in.norm == nullptr) {
      convert(in.x + begin * k, begin, end - begin);
      return;
    }
    const kernels::ElementwiseKernels& ew = kernels::ActiveElementwiseKernels();
    thread_local std::vector<float> row;  // grows to the widest input once per thread
    if (row.size() < static_cast<size_t>(k)) row.resize(k);
    for (int64_t i = begin; i < end; ++i) {
      const float* xi = in.x + i * k;
      if (in.up != nullptr) {
        ew.silu_mul(xi, in.up + i * k, k, row.data());
      } else if (in.norm->b != nullptr) {
        ew.layer_norm_row(xi, in.norm->w, in.norm->b, k, in.norm->eps, row.data());
      } else {
        ew.rms_norm_row(xi, in.norm->w, k, in.norm->eps, row.data());
      }
      convert(row.data(), i, 1);
    }
  };

  kernels::QuantizedRows q;
  kernels::RowCodes rq;
  const uint16_t* xb = nullptr;
  // The int8 formats share their code and correction buffers (a model may mix them).
  thread_local LargeVector<int8_t> codes;
  thread_local LargeVector<int32_t> corr;
  if (format == WeightFormat::kW8A8) {
    thread_local LargeVector<float> steps;
    rq.codes = Scratch(codes, static_cast<size_t>(m * kp));
    rq.steps = Scratch(steps, static_cast<size_t>(m));
    rq.corr = Scratch(corr, static_cast<size_t>(m));
    rq.kp = kp;
    pool.ParallelFor(m, row_grain, [&](int64_t begin, int64_t end, int) {
      for_input_rows(begin, end, [&](const float* rows, int64_t i, int64_t count) {
        kern.quantize_w8a8(rows, k, count, k, rq.Offset(i));
      });
    });
  } else if (format == WeightFormat::kBF16Packed) {
    thread_local LargeVector<uint16_t> buffer;
    uint16_t* dst = Scratch(buffer, static_cast<size_t>(m * kp));
    pool.ParallelFor(m, row_grain, [&](int64_t begin, int64_t end, int) {
      for_input_rows(begin, end, [&](const float* rows, int64_t i0, int64_t count) {
        for (int64_t i = i0; i < i0 + count; ++i) {
          kernels::ActiveElementwiseKernels().to_bf16(rows + (i - i0) * k, k, dst + i * kp);
          std::fill(dst + i * kp + k, dst + (i + 1) * kp, uint16_t{0});
        }
      });
    });
    xb = dst;
  } else {
    thread_local LargeVector<float> factors, exps, row_scales;
    const size_t blocks = static_cast<size_t>(m * (kp / kQuantBlock));
    q.codes = Scratch(codes, static_cast<size_t>(m * kp));
    q.factors = Scratch(factors, blocks);
    q.exps = Scratch(exps, blocks);
    q.corr = Scratch(corr, blocks);
    q.row_scales = Scratch(row_scales, static_cast<size_t>(m));
    q.kp = kp;
    pool.ParallelFor(m, row_grain, [&](int64_t begin, int64_t end, int) {
      for_input_rows(begin, end, [&](const float* rows, int64_t i, int64_t count) {
        kern.quantize(rows, k, count, k, q.Offset(i));
      });
    });
  }

  // Tasks are (weight, panel group, row block): a group's weights (kGroupBytes) and a row
  // block of converted x (kRowBlockBytes) stay in L2 together, and x is read from memory
  // once per group. Row blocks are multiples of kRowUnit.
  // Groups are multiples of every tier's panel tile (1, 2, 3, 4): a group of 8 panels ran
  // a quarter of them in 2-panel tail tiles of the 3-panel q8 tile, and the model's
  // matmuls ran 3-14 % slower. With few rows, which stream the weights, one block of rows
  // and panel runs per thread.
  constexpr int64_t kGroupBytes = 1 << 20, kRowBlockBytes = 512 << 10;
  constexpr int64_t kPanelUnit = 12;
  const int64_t x_row_bytes = kp * (format == WeightFormat::kBF16Packed ? 2 : 1);
  const int64_t row_block =
      std::max<int64_t>(kRowUnit, kRowBlockBytes / x_row_bytes / kRowUnit * kRowUnit);
  const int64_t row_blocks = (m + row_block - 1) / row_block;
  struct Plan {
    PackedLayout layout;
    int64_t group = 0, tasks = 0;
  };
  std::array<Plan, kMaxPackedOutputs> plans;
  int64_t total = 0;
  for (size_t o = 0; o < outs.size(); ++o) {
    Plan& plan = plans[o];
    plan.layout = PackedLayoutFor(format, outs[o].w->rows(), k);
    plan.group = PanelGrain(plan.layout.panels, m, pool.size());
    if (m > kRowUnit) {
      plan.group = std::clamp<int64_t>(kGroupBytes / plan.layout.panel_bytes, 1, plan.group * 4);
      plan.group = std::max<int64_t>(kPanelUnit, plan.group / kPanelUnit * kPanelUnit);
    }
    if (rope != nullptr) {
      const int64_t unit = rope->head_dim / kPanelRows;
      plan.group = (plan.group + unit - 1) / unit * unit;
    }
    plan.tasks = (plan.layout.panels + plan.group - 1) / plan.group * row_blocks;
    total += plan.tasks;
  }

  // Rows [i0, i0 + rows) of x against panels [p0, p1) of output o.
  auto run = [&](size_t o, int64_t i0, int64_t rows, int64_t p0, int64_t p1) {
    const MatMulOutput& out = outs[o];
    const PackedLayout& layout = plans[o].layout;
    const int64_t n = out.w->rows();
    kernels::PanelRange r;
    r.w = static_cast<const uint8_t*>(out.w->data()) + p0 * layout.panel_bytes;
    r.panels = p1 - p0;
    r.panel_bytes = layout.panel_bytes;
    r.kp = kp;
    r.bias = out.bias ? out.bias + p0 * kPanelRows : nullptr;
    r.ldy = n;
    r.n = std::min(n - p0 * kPanelRows, (p1 - p0) * kPanelRows);
    r.accumulate = store == Store::kAccumulate;
    // GELU and the rotation follow the kernel kRowUnit rows at a time, so their products
    // are still in L2 (a task's whole block of y can be larger).
    const int64_t chunk = store == Store::kGeluTanh || rope != nullptr ? kRowUnit : rows;
    for (int64_t c0 = i0; c0 < i0 + rows; c0 += chunk) {
      const int64_t c = std::min(chunk, i0 + rows - c0);
      r.y = out.y + c0 * n + p0 * kPanelRows;
      switch (format) {
        case WeightFormat::kBF16Packed:
          kern.bf16(xb + c0 * kp, c, r);
          break;
        case WeightFormat::kQ8:
          kern.q8(q.Offset(c0), c, r);
          break;
        case WeightFormat::kW8A8:
          kern.w8a8(rq.Offset(c0), c, r);
          break;
        default:
          kern.q4(q.Offset(c0), c, r);
          break;
      }
      if (store == Store::kGeluTanh) {
        for (int64_t i = 0; i < c; ++i) GeluTanh(r.y + i * r.ldy, r.n);
      }
      if (rope != nullptr) {
        const int64_t col = p0 * kPanelRows;
        const int64_t heads =
            (std::min<int64_t>(col + r.n, int64_t{rope->heads} * rope->head_dim) - col) /
            rope->head_dim;
        const int64_t half = rope->head_dim / 2;
        if (heads > 0) {
          ApplyRope(r.y, c, static_cast<int>(heads), rope->head_dim, r.ldy, rope->cos + c0 * half,
                    rope->sin + c0 * half);
        }
      }
    }
  };
  pool.ParallelFor(total, 1, [&](int64_t t0, int64_t t1, int) {
    for (int64_t t = t0; t < t1; ++t) {
      size_t o = 0;
      int64_t local = t;
      while (local >= plans[o].tasks) local -= plans[o++].tasks;
      const int64_t group = plans[o].group, panels = plans[o].layout.panels;
      const int64_t g = local / row_blocks, i0 = local % row_blocks * row_block;
      run(o, i0, std::min(row_block, m - i0), g * group, std::min(panels, (g + 1) * group));
    }
  });
}

void PackedMatMul(const Input& in, int64_t m, const LinearWeight& w, const float* bias, float* y,
                  Store store, ThreadPool& pool, const OutputRope* rope = nullptr) {
  const MatMulOutput out{&w, bias, y};
  PackedMatMuls(in, m, std::span<const MatMulOutput>(&out, 1), store, pool, rope);
}

// x, or x's rows normalized into a per-thread buffer: the input of the paths that do not
// form their rows as they convert them.
const float* Normalized(const float* x, int64_t m, int64_t k, const InputNorm* norm,
                        ThreadPool& pool) {
  if (norm == nullptr) return x;
  thread_local LargeVector<float> buffer;
  float* y = Scratch(buffer, static_cast<size_t>(m * k));
  if (norm->b != nullptr) {
    LayerNorm(x, norm->w, norm->b, m, k, norm->eps, y, &pool);
  } else {
    RmsNorm(x, norm->w, m, k, k, norm->eps, y, &pool);
  }
  return y;
}

}  // namespace

bool LinearWeight::InPlace(const WeightView& view, WeightFormat format) {
  return (format == WeightFormat::kF32 && view.dtype == DType::kF32) ||
         (format == WeightFormat::kBF16 && view.dtype == DType::kBF16);
}

LinearWeight LinearWeight::Prepare(const WeightView& view, WeightFormat format, ThreadPool* pool) {
  LinearWeight w;
  w.format_ = format;
  w.rows_ = view.rows;
  w.cols_ = view.cols;
  if (InPlace(view, format)) {
    w.data_ = view.data;
    return w;
  }
  if (IsPacked(format)) {
    const PackedLayout layout = PackedLayoutFor(format, view.rows, view.cols);
    std::shared_ptr<uint8_t> buffer = AllocateAligned(static_cast<size_t>(layout.bytes()));
    uint8_t* dst = buffer.get();
    auto pack = [&](int64_t first, int64_t last, int) {
      PackPanels(view, format, first, last, dst + first * layout.panel_bytes);
    };
    if (pool != nullptr) {
      pool->ParallelFor(layout.panels, 4, pack);
    } else {
      pack(0, layout.panels, 0);
    }
    w.data_ = dst;
    w.owned_bytes_ = static_cast<size_t>(layout.bytes());
    w.keep_alive_ = std::move(buffer);
    return w;
  }
  const int64_t n = view.rows * view.cols;
  const size_t elem = format == WeightFormat::kF32 ? 4 : 2;
  std::shared_ptr<uint8_t> buffer = AllocateAligned(static_cast<size_t>(n) * elem);
  auto convert = [&](int64_t first, int64_t last, int) {
    std::vector<float> row(static_cast<size_t>(view.cols));
    for (int64_t r = first; r < last; ++r) {
      if (format == WeightFormat::kF32) {
        DecodeWeightRow(view, r, view.cols, reinterpret_cast<float*>(buffer.get()) + r * view.cols);
        continue;
      }
      DecodeWeightRow(view, r, view.cols, row.data());
      uint16_t* dst = reinterpret_cast<uint16_t*>(buffer.get()) + r * view.cols;
      for (int64_t c = 0; c < view.cols; ++c) dst[c] = F32ToBf16(row[static_cast<size_t>(c)]);
    }
  };
  if (pool != nullptr) {
    pool->ParallelFor(view.rows, 16, convert);
  } else {
    convert(0, view.rows, 0);
  }
  w.data_ = buffer.get();
  w.owned_bytes_ = static_cast<size_t>(n) * elem;
  w.keep_alive_ = std::move(buffer);
  return w;
}

LinearWeight LinearWeight::FromPacked(WeightFormat format, int64_t rows, int64_t cols,
                                      const void* data, std::shared_ptr<const void> keep_alive) {
  if (!IsPacked(format)) {
    Fail(ErrorCode::kInternal, "FromPacked needs a packed format, got ", WeightFormatName(format));
  }
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
    Fail(ErrorCode::kInternal, "packed weight data is not 64-byte aligned");
  }
  LinearWeight w;
  w.format_ = format;
  w.rows_ = rows;
  w.cols_ = cols;
  w.data_ = data;
  w.keep_alive_ = std::move(keep_alive);
  return w;
}

size_t LinearWeight::bytes() const {
  switch (format_) {
    case WeightFormat::kF32:
      return static_cast<size_t>(rows_ * cols_) * 4;
    case WeightFormat::kBF16:
      return static_cast<size_t>(rows_ * cols_) * 2;
    default:
      return static_cast<size_t>(PackedLayoutFor(format_, rows_, cols_).bytes());
  }
}

int64_t RowsPerWeightRead(WeightFormat format) {
  switch (format) {
    case WeightFormat::kBF16Packed:
      return Packed().bf16_rows;
    case WeightFormat::kQ8:
    case WeightFormat::kQ4:
      return Packed().quant_rows;
    case WeightFormat::kW8A8:
      return Packed().w8a8_rows;
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
      break;
  }
  return 1;
}

void MatMul(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
            MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm) {
  if (m <= 0 || w.rows() <= 0) return;
  if (IsPacked(w.format())) {
    PackedMatMul({x, nullptr, norm}, m, w, bias, y, Store::kPlain, pool);
  } else {
    RowMajorMatMul(Normalized(x, m, w.cols(), norm, pool), m, w, bias, y, precision, pool);
  }
}

void MatMuls(const float* x, int64_t m, std::span<const MatMulOutput> outs,
             MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm) {
  if (m <= 0 || outs.empty()) return;
  // Packed weights of one format and depth share x's conversion and one parallel pass.
  const LinearWeight& first = *outs[0].w;
  bool fused = IsPacked(first.format()) && outs.size() <= kMaxPackedOutputs;
  for (const MatMulOutput& out : outs) {
    fused = fused && out.w->format() == first.format() && out.w->cols() == first.cols() &&
            out.w->rows() > 0;
  }
  if (!fused) {
    const float* xn = Normalized(x, m, first.cols(), norm, pool);
    for (const MatMulOutput& out : outs) MatMul(xn, m, *out.w, out.bias, out.y, precision, pool);
    return;
  }
  PackedMatMuls({x, nullptr, norm}, m, outs, Store::kPlain, pool);
}

void MatMulAdd(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
               MatmulPrecision precision, ThreadPool& pool) {
  if (m <= 0 || w.rows() <= 0) return;
  if (IsPacked(w.format())) {
    PackedMatMul({x}, m, w, bias, y, Store::kAccumulate, pool);
    return;
  }
  // The row-major kernels store only; they are the f32 reference path, not the fast one.
  const int64_t n = w.rows();
  thread_local LargeVector<float> buffer;
  float* t = Scratch(buffer, static_cast<size_t>(m * n));
  RowMajorMatMul(x, m, w, bias, t, precision, pool);
  AddInPlace(y, t, m * n, &pool);
}

void MatMulGeluTanh(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
                    MatmulPrecision precision, ThreadPool& pool, const InputNorm* norm) {
  if (m <= 0 || w.rows() <= 0) return;
  if (IsPacked(w.format())) {
    PackedMatMul({x, nullptr, norm}, m, w, bias, y, Store::kGeluTanh, pool);
    return;
  }
  RowMajorMatMul(Normalized(x, m, w.cols(), norm, pool), m, w, bias, y, precision, pool);
  GeluTanh(y, m * w.rows(), &pool);
}

void MatMulRope(const float* x, int64_t m, const LinearWeight& w, const float* bias, float* y,
                const OutputRope& rope, MatmulPrecision precision, ThreadPool& pool,
                const InputNorm* norm) {
  if (m <= 0 || w.rows() <= 0) return;
  if (IsPacked(w.format()) && rope.head_dim % kPanelRows == 0) {
    PackedMatMul({x, nullptr, norm}, m, w, bias, y, Store::kPlain, pool, &rope);
    return;
  }
  MatMul(x, m, w, bias, y, precision, pool, norm);
  ApplyRope(y, m, rope.heads, rope.head_dim, w.rows(), rope.cos, rope.sin, &pool);
}

void MatMulAddSwiGlu(const float* gate, const float* up, int64_t m, const LinearWeight& w,
                     const float* bias, float* y, MatmulPrecision precision, ThreadPool& pool) {
  if (m <= 0 || w.rows() <= 0) return;
  if (IsPacked(w.format())) {
    const MatMulOutput out{&w, bias, y};
    PackedMatMuls({gate, up}, m, std::span<const MatMulOutput>(&out, 1), Store::kAccumulate, pool);
    return;
  }
  thread_local LargeVector<float> buffer;
  float* product = Scratch(buffer, static_cast<size_t>(m * w.cols()));
  SiluMul(gate, up, m * w.cols(), product, &pool);
  MatMulAdd(product, m, w, bias, y, precision, pool);
}

}  // namespace qvl
