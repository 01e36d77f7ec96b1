#include "model/quantized_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "model/bitsandbytes_weights.h"

namespace qvl {
namespace {

// The block one scale of a [rows, cols] weight covers under `q`, and how many there are.
struct ScaleGrid {
  int64_t block_rows, block_cols, rows, cols;
};
ScaleGrid GridOf(const WeightQuantization& q, int64_t rows, int64_t cols) {
  const int64_t br = q.block_rows > 0 ? q.block_rows : std::max<int64_t>(rows, 1);
  const int64_t bc = q.block_cols > 0 ? q.block_cols : std::max<int64_t>(cols, 1);
  return {br, bc, (rows + br - 1) / br, (cols + bc - 1) / bc};
}

// A shape without its 1-sized dimensions: writers store a channel's scales as [out, 1]
// or [out] and a tensor's as [], [1] or [1, 1].
std::vector<int64_t> Squeezed(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

int64_t CodesPerWord(const WeightQuantization& q) { return 32 / q.bits; }

void ExpectDType(const TensorInfo& t, bool ok, std::string_view what) {
  if (!ok) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         "; qvl reads ", what);
  }
}

void ExpectShape(const TensorInfo& t, const std::vector<int64_t>& shape, std::string_view why) {
  if (t.shape != shape) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has shape ", t.ShapeString(),
         ", expected ", FormatShape(shape), why);
  }
}

// AutoAWQ's or GPTQ's weight `name` of `shape`, transposed against the other layouts: qweight `t`
// ([in, out / 8] for AWQ, [in / per, out] for GPTQ), scales [groups, out] and qzeros
// [groups, out / per].
void CheckTransposedWeight(const TensorStore& store, const WeightQuantization& q,
                           std::string_view name, const std::vector<int64_t>& shape,
                           const TensorInfo& t, const QuantizedWeightNames& names) {
  const int64_t rows = shape[0], cols = shape[1], per = CodesPerWord(q);
  const bool awq = q.method == WeightQuantization::Method::kAwq;
  ExpectShape(t,
              awq ? std::vector<int64_t>{cols, (rows + per - 1) / per}
                  : std::vector<int64_t>{(cols + per - 1) / per, rows},
              StrCat(" (", name, " ", FormatShape(shape), " transposed, ", per, " codes a word)"));
  const ScaleGrid grid = GridOf(q, rows, cols);
  const TensorInfo& s = store.Require(names.scales);
  ExpectShape(s, {grid.cols, rows},
              StrCat(" (one scale per ", q.BlocksName(), " of ", name,
                     ", transposed, as config.json's quantization_config says)"));
  ExpectDType(s, IsFloatWeight(s.dtype), "F32, BF16 or F16 scales");
  const TensorInfo& z = store.Require(names.zero_points);
  ExpectShape(z, {grid.cols, (rows + per - 1) / per},
              " (the zero points packed along the outputs)");
  ExpectDType(z, z.dtype == DType::kI32, "the zero points of packed codes packed as I32");
}

// Carves the view of a checked quantized weight out of the store; its f32 scales and zero
// points go to `params`, which the view points into.
class QuantizedCarver {
 public:
  QuantizedCarver(const TensorStore& store, const WeightQuantization& quant,
                  std::vector<std::vector<float>>* params)
      : store_(store), quant_(quant), params_(params) {}

  WeightView View(const std::string& name) const {
    const QuantizedWeightNames names = QuantizedNames(name, quant_);
    const TensorInfo* packed =
        quant_.packed() && store_.Find(name) == nullptr ? &store_.Require(names.codes) : nullptr;
    const TensorInfo& t = packed != nullptr ? *packed : store_.Require(name);
    WeightView w;
    w.dtype = t.dtype;
    w.rows = t.shape.empty() ? 1 : t.shape[0];
    w.cols = w.rows == 0 ? 0 : t.numel() / w.rows;
    w.data = t.data;
    const bool awq = packed != nullptr && quant_.method == WeightQuantization::Method::kAwq;
    const bool gptq = packed != nullptr && quant_.method == WeightQuantization::Method::kGptq;
    if (awq) {  // [in, out / 8]; the scales' [in / group, out] give out exactly
      w.cols = t.shape[0];
      w.rows = store_.Require(names.scales).shape[1];
      w.words = WordLayout::kAwq;
    } else if (gptq) {  // [in / (32 / bits), out]; g_idx gives in exactly
      w.rows = t.shape[1];
      w.cols = store_.Require(names.groups).numel();
      w.words = WordLayout::kGptq;
    } else if (packed != nullptr) {
      w.cols = IntValues(store_.Require(names.shape))[1];
    }
    if (t.dtype == DType::kU8) return Bnb4Bit(name, w);
    w.code_bits = quant_.bits;
    const ScaleGrid grid = GridOf(quant_, w.rows, w.cols);
    w.block_rows = grid.block_rows;
    w.block_cols = grid.block_cols;
    const TensorInfo& scale = store_.Require(names.scales);
    params_->push_back(awq || gptq ? Transposed(FloatValues(scale), grid) : FloatValues(scale));
    if (quant_.method == WeightQuantization::Method::kBitsAndBytes) {
      for (float& s : params_->back()) s = Bnb8BitScale(s);
    }
    w.block_scales = Scales(scale);
    if (quant_.method != WeightQuantization::Method::kFp8) w.product = scale.dtype;
    if (!quant_.symmetric) {
      params_->push_back(ZeroPoints(store_.Require(names.zero_points), grid));
      w.block_zeros = params_->back().data();
    }
    if (quant_.column_groups) ColumnGroups(store_.Require(names.groups), grid, &w);
    return w;
  }

 private:
  // The last scales pushed to params_, all finite, read from tensor `t`.
  const float* Scales(const TensorInfo& t) const {
    for (float s : params_->back()) {
      if (!std::isfinite(s)) {
        Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " holds ", s,
             "; the scales of quantized weights must be finite");
      }
    }
    return params_->back().data();
  }

  // bitsandbytes' 4-bit weight `name`, its codes mapped by `w`.
  WeightView Bnb4Bit(const std::string& name, WeightView w) const {
    const Bnb4BitState state = ReadBnb4BitState(store_, quant_, name);
    w.rows = state.shape[0];
    w.cols = state.shape[1];
    w.code_bits = 4;
    w.levels = FourBitLevels(quant_.four_bit);
    w.flat_blocks = true;
    w.block_rows = 1;
    w.block_cols = state.blocksize;
    params_->push_back(Bnb4BitAbsmax(store_, name, state));
    w.block_scales = Scales(store_.Require(BnbScalesName(name, quant_)));
    w.product = state.dtype;
    return w;
  }

  // Each column's group from `g` (I32 [cols], checked), kept only when some column is
  // out of the consecutive order (GPTQ's act-order, or actorder "group").
  static void ColumnGroups(const TensorInfo& g, const ScaleGrid& grid, WeightView* w) {
    const int32_t* groups = reinterpret_cast<const int32_t*>(g.data);
    bool consecutive = true;
    for (int64_t c = 0; c < w->cols; ++c) {
      if (groups[c] < 0 || groups[c] >= grid.cols) {
        Fail(ErrorCode::kCorrupt, *g.file, ": tensor ", g.name, " puts column ", c, " in group ",
             groups[c], "; the weight has ", grid.cols, " groups");
      }
      consecutive = consecutive && groups[c] == c / grid.block_cols;
    }
    if (!consecutive) w->column_groups = groups;
  }

  // [grid.cols, grid.rows] values (AutoAWQ's and GPTQ's scales) as [grid.rows, grid.cols].
  static std::vector<float> Transposed(const std::vector<float>& in, const ScaleGrid& grid) {
    std::vector<float> out(in.size());
    for (int64_t r = 0; r < grid.rows; ++r) {
      for (int64_t c = 0; c < grid.cols; ++c) out[r * grid.cols + c] = in[c * grid.rows + r];
    }
    return out;
  }

  // I8 zero points as they are; packed ones as pack-quantized stores them, packed along
  // the rows (dimension 0) of the scales' grid, each + 2^(bits - 1); AutoAWQ's as its
  // codes, [grid.cols, grid.rows / 8] words.
  std::vector<float> ZeroPoints(const TensorInfo& z, const ScaleGrid& grid) const {
    std::vector<float> out(static_cast<size_t>(grid.rows * grid.cols));
    if (z.dtype == DType::kI8) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int8_t>(z.data[i]);
      return out;
    }
    if (quant_.method == WeightQuantization::Method::kGptq) return GptqZeroPoints(z, grid);
    if (quant_.method == WeightQuantization::Method::kAwq) {
      for (int64_t r = 0; r < grid.rows; ++r) {
        for (int64_t c = 0; c < grid.cols; ++c) {
          out[static_cast<size_t>(r * grid.cols + c)] =
              static_cast<float>(AwqCode(z.data, grid.rows, r, c));
        }
      }
      return out;
    }
    const int64_t per_word = CodesPerWord(quant_);
    const uint32_t mask = (1u << quant_.bits) - 1;
    for (int64_t r = 0; r < grid.rows; ++r) {
      for (int64_t c = 0; c < grid.cols; ++c) {
        uint32_t word;
        std::memcpy(&word, z.data + 4 * ((r / per_word) * grid.cols + c), 4);
        const int code = static_cast<int>((word >> (quant_.bits * (r % per_word))) & mask);
        out[static_cast<size_t>(r * grid.cols + c)] =
            static_cast<float>(code - (1 << (quant_.bits - 1)));
      }
    }
    return out;
  }

  // GPTQ's qzeros, [grid.cols, ceil(grid.rows / per)] words packing the zero points of
  // consecutive outputs, lowest first; the v1 format stores each minus 1, and GPTQModel
  // adds 1 to every field of a word at once, as here.
  std::vector<float> GptqZeroPoints(const TensorInfo& z, const ScaleGrid& grid) const {
    const int64_t per_word = CodesPerWord(quant_), words = (grid.rows + per_word - 1) / per_word;
    const uint32_t mask = (1u << quant_.bits) - 1;
    uint32_t ones = 0;
    for (int64_t k = 0; k < per_word; ++k) ones |= 1u << (quant_.bits * k);
    std::vector<float> out(static_cast<size_t>(grid.rows * grid.cols));
    for (int64_t g = 0; g < grid.cols; ++g) {
      for (int64_t r = 0; r < grid.rows; ++r) {
        uint32_t word;
        std::memcpy(&word, z.data + 4 * (g * words + r / per_word), 4);
        if (quant_.zeros_minus_one) word += ones;
        out[static_cast<size_t>(r * grid.cols + g)] =
            static_cast<float>((word >> (quant_.bits * (r % per_word))) & mask);
      }
    }
    return out;
  }

  const TensorStore& store_;
  WeightQuantization quant_;
  std::vector<std::vector<float>>* params_;
};

}  // namespace

QuantizedWeightNames QuantizedNames(std::string_view weight_name, const WeightQuantization& q) {
  const std::string_view prefix =
      weight_name.substr(0, weight_name.size() - std::string_view(".weight").size());
  if (q.method == WeightQuantization::Method::kAwq ||
      q.method == WeightQuantization::Method::kGptq) {
    return {StrCat(prefix, ".qweight"), StrCat(prefix, ".scales"), StrCat(prefix, ".qzeros"), "",
            q.method == WeightQuantization::Method::kGptq ? StrCat(prefix, ".g_idx") : ""};
  }
  if (q.method == WeightQuantization::Method::kBitsAndBytes) {
    return {std::string(weight_name), BnbScalesName(weight_name, q), "", "", ""};
  }
  QuantizedWeightNames n;
  n.codes = q.packed() ? StrCat(prefix, ".weight_packed") : std::string(weight_name);
  n.scales = StrCat(
      prefix, q.method == WeightQuantization::Method::kFp8 ? ".weight_scale_inv" : ".weight_scale");
  if (!q.symmetric) n.zero_points = StrCat(prefix, ".weight_zero_point");
  if (q.packed()) n.shape = StrCat(prefix, ".weight_shape");
  if (q.column_groups) n.groups = StrCat(prefix, ".weight_g_idx");
  return n;
}

void CheckQuantizedWeight(const TensorStore& store, const WeightQuantization& q,
                          std::string_view name, const std::vector<int64_t>& shape,
                          const TensorInfo& t, std::vector<std::string>* known) {
  if (!q.present()) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         ", but config.json has no quantization_config saying how its codes are scaled");
  }
  if (t.dtype != q.codes) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         ", but config.json's quantization_config describes ", q.CodesName(), " codes");
  }
  const QuantizedWeightNames names = QuantizedNames(name, q);
  const int64_t rows = shape[0], cols = shape[1];
  if (q.column_groups) {
    const TensorInfo& g = store.Require(names.groups);
    ExpectShape(g, {cols}, StrCat(" (a group for each column of ", name, ")"));
    ExpectDType(g, g.dtype == DType::kI32, "I32 column groups");
    known->push_back(names.groups);
  }
  if (q.method == WeightQuantization::Method::kAwq ||
      q.method == WeightQuantization::Method::kGptq) {
    CheckTransposedWeight(store, q, name, shape, t, names);
    known->push_back(names.scales);
    known->push_back(names.zero_points);
    return;
  }
  if (t.dtype == DType::kU8) {
    CheckBnb4BitWeight(store, q, name, shape, t, known);
    return;
  }
  if (q.method == WeightQuantization::Method::kBitsAndBytes) {
    CheckBnb8BitFormat(store, name, known);
  }
  if (q.packed()) {
    ExpectShape(
        t, {rows, (cols + CodesPerWord(q) - 1) / CodesPerWord(q)},
        StrCat(" (", name, " ", FormatShape(shape), " in words of ", CodesPerWord(q), " codes)"));
    const TensorInfo& s = store.Require(names.shape);
    ExpectDType(s, s.dtype == DType::kI32 || s.dtype == DType::kI64, "I32 or I64 shapes");
    if (s.numel() != 2 || IntValues(s) != shape) {
      Fail(ErrorCode::kCorrupt, *s.file, ": tensor ", s.name, " does not hold ", FormatShape(shape),
           ", the shape of ", name);
    }
    known->push_back(names.shape);
  }
  const ScaleGrid grid = GridOf(q, rows, cols);
  const std::string why = StrCat(" (one scale per ", q.BlocksName(), " of ", name,
                                 ", as config.json's quantization_config says)");
  const TensorInfo& s = store.Require(names.scales);
  if (Squeezed(s.shape) != Squeezed({grid.rows, grid.cols}))
    ExpectShape(s, {grid.rows, grid.cols}, why);
  ExpectDType(s, IsFloatWeight(s.dtype), "F32, BF16 or F16 scales");
  known->push_back(names.scales);
  if (!q.symmetric) {
    const TensorInfo& z = store.Require(names.zero_points);
    if (q.packed()) {
      ExpectDType(z, z.dtype == DType::kI32, "the zero points of packed codes packed as I32");
      ExpectShape(z, {(grid.rows + CodesPerWord(q) - 1) / CodesPerWord(q), grid.cols},
                  " (the zero points packed along the rows of the scales)");
    } else {
      ExpectDType(z, z.dtype == DType::kI8, "I8 zero points");
      if (Squeezed(z.shape) != Squeezed(s.shape)) ExpectShape(z, s.shape, " (the scales' shape)");
    }
    known->push_back(names.zero_points);
  }
}

WeightView QuantizedWeightView(const TensorStore& store, const WeightQuantization& q,
                               const std::string& name, std::vector<std::vector<float>>* params) {
  return QuantizedCarver(store, q, params).View(name);
}

}  // namespace qvl
