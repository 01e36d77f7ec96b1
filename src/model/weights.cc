#include "model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "base/bf16.h"
#include "base/error.h"
#include "base/log.h"
#include "model/bitsandbytes_weights.h"

namespace qvl {
namespace {

constexpr char kText[] = "model.language_model.";
constexpr char kVisual[] = "model.visual.";
constexpr char kLmHead[] = "lm_head.weight";

class TensorListBuilder {
 public:
  void Add(std::string name, std::vector<int64_t> shape, const char* part, TensorRole role) {
    list_.push_back({std::move(name), std::move(shape), part, role});
  }
  // A Linear layer: weight [out, in] and, when `bias`, bias [out].
  void Linear(const std::string& prefix, int64_t out, int64_t in, const char* part, bool bias) {
    if (bias) Add(prefix + ".bias", {out}, part, TensorRole::kBias);
    Add(prefix + ".weight", {out, in}, part, TensorRole::kMatrix);
  }
  void LayerNorm(const std::string& prefix, int64_t width, const char* part) {
    Add(prefix + ".bias", {width}, part, TensorRole::kBias);
    Add(prefix + ".weight", {width}, part, TensorRole::kNormGain);
  }
  void Merger(const std::string& prefix, int64_t norm_width, int64_t merged, int64_t out) {
    Linear(prefix + ".linear_fc1", merged, merged, "merger", true);
    Linear(prefix + ".linear_fc2", out, merged, "merger", true);
    LayerNorm(prefix + ".norm", norm_width, "merger");
  }
  std::vector<ExpectedTensor> Sorted() {
    std::sort(list_.begin(), list_.end(),
              [](const ExpectedTensor& a, const ExpectedTensor& b) { return a.name < b.name; });
    return std::move(list_);
  }

 private:
  std::vector<ExpectedTensor> list_;
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += StrCat(i ? ", " : "", shape[i]);
  return s + "]";
}

bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kBF16 || t == DType::kF16; }

// The values of a small I32 or I64 tensor (a packed weight's weight_shape).
std::vector<int64_t> Ints(const TensorInfo& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t.dtype == DType::kI64) {
      std::memcpy(&out[i], t.data + 8 * i, 8);
    } else {
      int32_t v;
      std::memcpy(&v, t.data + 4 * i, 4);
      out[i] = v;
    }
  }
  return out;
}

// The values of an F32, BF16 or F16 tensor.
std::vector<float> Floats(const TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h;
    switch (t.dtype) {
      case DType::kF32:
        std::memcpy(&out[i], t.data + 4 * i, 4);
        break;
      case DType::kBF16:
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = Bf16ToF32(h);
        break;
      default:  // kF16; CheckQwen3VLTensors admits nothing else
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = F16ToF32(h);
        break;
    }
  }
  return out;
}

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

// Looks tensors up by name after every expected tensor has been checked. The f32 scales
// and zero points of quantized weights go to `params`, which the views point into.
class WeightCarver {
 public:
  WeightCarver(const TensorStore& store, const WeightQuantization& quant,
               std::vector<std::vector<float>>* params)
      : store_(store), quant_(quant), params_(params) {}

  WeightView Matrix(const std::string& name) const {
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
      w.cols = Ints(store_.Require(names.shape))[1];
    }
    if (IsFloat(t.dtype)) return w;
    if (t.dtype == DType::kU8) return Bnb4Bit(name, w);
    w.code_bits = quant_.bits;
    const ScaleGrid grid = GridOf(quant_, w.rows, w.cols);
    w.block_rows = grid.block_rows;
    w.block_cols = grid.block_cols;
    const TensorInfo& scale = store_.Require(names.scales);
    params_->push_back(awq || gptq ? Transposed(Floats(scale), grid) : Floats(scale));
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

  std::vector<float> Vector(const std::string& name) const { return Floats(store_.Require(name)); }

  // The weight and bias of a Linear layer or a LayerNorm, named as TensorListBuilder's.
  void Linear(const std::string& prefix, WeightView* weight, std::vector<float>* bias) const {
    *weight = Matrix(prefix + ".weight");
    *bias = Vector(prefix + ".bias");
  }
  void LayerNorm(const std::string& prefix, std::vector<float>* gain,
                 std::vector<float>* bias) const {
    *gain = Vector(prefix + ".weight");
    *bias = Vector(prefix + ".bias");
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
    if (!consecutive) {
      w->column_groups = groups;
      w->groups = grid.cols;
    }
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

void ExpectDType(const TensorInfo& t, bool ok, std::string_view what) {
  if (!ok) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         "; qvl reads ", what);
  }
}

void ExpectShape(const TensorInfo& t, const std::vector<int64_t>& shape, std::string_view why) {
  if (t.shape != shape) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has shape ", t.ShapeString(),
         ", expected ", ShapeText(shape), why);
  }
}

// AutoAWQ's or GPTQ's weight `e`, transposed against the other layouts: qweight `t`
// ([in, out / 8] for AWQ, [in / per, out] for GPTQ), scales [groups, out] and qzeros
// [groups, out / per].
void CheckTransposedWeight(const TensorStore& store, const WeightQuantization& q,
                           const ExpectedTensor& e, const TensorInfo& t,
                           const QuantizedWeightNames& names) {
  const int64_t rows = e.shape[0], cols = e.shape[1], per = CodesPerWord(q);
  const bool awq = q.method == WeightQuantization::Method::kAwq;
  ExpectShape(
      t,
      awq ? std::vector<int64_t>{cols, (rows + per - 1) / per}
          : std::vector<int64_t>{(cols + per - 1) / per, rows},
      StrCat(" (", e.name, " ", ShapeText(e.shape), " transposed, ", per, " codes a word)"));
  const ScaleGrid grid = GridOf(q, rows, cols);
  const TensorInfo& s = store.Require(names.scales);
  ExpectShape(s, {grid.cols, rows},
              StrCat(" (one scale per ", q.BlocksName(), " of ", e.name,
                     ", transposed, as config.json's quantization_config says)"));
  ExpectDType(s, IsFloat(s.dtype), "F32, BF16 or F16 scales");
  const TensorInfo& z = store.Require(names.zero_points);
  ExpectShape(z, {grid.cols, (rows + per - 1) / per},
              " (the zero points packed along the outputs)");
  ExpectDType(z, z.dtype == DType::kI32, "the zero points of packed codes packed as I32");
}

// The quantized weight `e` whose codes are `t` (the PREFIX.weight_packed words when
// packed): its codes match config.json's quantization_config, and its scales, zero points
// and shape are there with their shapes and dtypes. Appends their names to `known`.
void CheckQuantizedWeight(const TensorStore& store, const WeightQuantization& q,
                          const ExpectedTensor& e, const TensorInfo& t,
                          std::vector<std::string>* known) {
  if (!IsLinearWeight(e)) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         "; qvl reads quantized codes only for the weights of Linear layers");
  }
  if (!q.present()) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         ", but config.json has no quantization_config saying how its codes are scaled");
  }
  if (t.dtype != q.codes) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         ", but config.json's quantization_config describes ", q.CodesName(), " codes");
  }
  const QuantizedWeightNames names = QuantizedNames(e.name, q);
  const int64_t rows = e.shape[0], cols = e.shape[1];
  if (q.column_groups) {
    const TensorInfo& g = store.Require(names.groups);
    ExpectShape(g, {cols}, StrCat(" (a group for each column of ", e.name, ")"));
    ExpectDType(g, g.dtype == DType::kI32, "I32 column groups");
    known->push_back(names.groups);
  }
  if (q.method == WeightQuantization::Method::kAwq ||
      q.method == WeightQuantization::Method::kGptq) {
    CheckTransposedWeight(store, q, e, t, names);
    known->push_back(names.scales);
    known->push_back(names.zero_points);
    return;
  }
  if (t.dtype == DType::kU8) {
    CheckBnb4BitWeight(store, q, e.name, e.shape, t, known);
    return;
  }
  if (q.method == WeightQuantization::Method::kBitsAndBytes) {
    CheckBnb8BitFormat(store, e.name, known);
  }
  if (q.packed()) {
    ExpectShape(
        t, {rows, (cols + CodesPerWord(q) - 1) / CodesPerWord(q)},
        StrCat(" (", e.name, " ", ShapeText(e.shape), " in words of ", CodesPerWord(q), " codes)"));
    const TensorInfo& s = store.Require(names.shape);
    ExpectDType(s, s.dtype == DType::kI32 || s.dtype == DType::kI64, "I32 or I64 shapes");
    if (s.numel() != 2 || Ints(s) != e.shape) {
      Fail(ErrorCode::kCorrupt, *s.file, ": tensor ", s.name, " does not hold ", ShapeText(e.shape),
           ", the shape of ", e.name);
    }
    known->push_back(names.shape);
  }
  const ScaleGrid grid = GridOf(q, rows, cols);
  const std::string why = StrCat(" (one scale per ", q.BlocksName(), " of ", e.name,
                                 ", as config.json's quantization_config says)");
  const TensorInfo& s = store.Require(names.scales);
  if (Squeezed(s.shape) != Squeezed({grid.rows, grid.cols}))
    ExpectShape(s, {grid.rows, grid.cols}, why);
  ExpectDType(s, IsFloat(s.dtype), "F32, BF16 or F16 scales");
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

}  // namespace

QuantizedWeightNames QuantizedNames(std::string_view weight_name, const WeightQuantization& q) {
  const std::string_view prefix =
      weight_name.substr(0, weight_name.size() - std::string_view(".weight").size());
  QuantizedWeightNames n;
  if (q.method == WeightQuantization::Method::kAwq ||
      q.method == WeightQuantization::Method::kGptq) {
    return {StrCat(prefix, ".qweight"), StrCat(prefix, ".scales"), StrCat(prefix, ".qzeros"), "",
            q.method == WeightQuantization::Method::kGptq ? StrCat(prefix, ".g_idx") : ""};
  }
  if (q.method == WeightQuantization::Method::kBitsAndBytes) {
    return {std::string(weight_name), BnbScalesName(weight_name, q), "", "", ""};
  }
  n.codes = q.packed() ? StrCat(prefix, ".weight_packed") : std::string(weight_name);
  n.scales = StrCat(
      prefix, q.method == WeightQuantization::Method::kFp8 ? ".weight_scale_inv" : ".weight_scale");
  if (!q.symmetric) n.zero_points = StrCat(prefix, ".weight_zero_point");
  if (q.packed()) n.shape = StrCat(prefix, ".weight_shape");
  if (q.column_groups) n.groups = StrCat(prefix, ".weight_g_idx");
  return n;
}

void CheckQwen3VLTensors(const TensorStore& store, const ModelConfig& config) {
  const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(config);
  const WeightQuantization& q = config.weight_quant;
  std::vector<std::string> missing;
  std::vector<std::string> beside;  // scales, zero points and shapes of quantized weights
  for (const ExpectedTensor& e : expected) {
    const TensorInfo* t = store.Find(e.name);
    if (t == nullptr && q.packed() && IsLinearWeight(e)) {
      if (const TensorInfo* packed = store.Find(QuantizedNames(e.name, q).codes)) {
        CheckQuantizedWeight(store, q, e, *packed, &beside);
        beside.push_back(packed->name);
        continue;
      }
    }
    if (t == nullptr) {
      missing.push_back(e.name);
      continue;
    }
    if (t->dtype == DType::kU8) {  // bitsandbytes' 4-bit codes, [ceil(out x in / 2), 1]
      CheckQuantizedWeight(store, q, e, *t, &beside);
      continue;
    }
    if (t->shape != e.shape) {
      Fail(ErrorCode::kCorrupt, *t->file, ": tensor ", e.name, " has shape ", t->ShapeString(),
           ", expected ", ShapeText(e.shape));
    }
    if (t->dtype == DType::kF8E4M3 || t->dtype == DType::kI8) {
      CheckQuantizedWeight(store, q, e, *t, &beside);
    } else if (!IsFloat(t->dtype)) {
      Fail(ErrorCode::kCorrupt, *t->file, ": tensor ", e.name, " has dtype ", DTypeName(t->dtype),
           "; qvl reads F32, BF16 or F16 weights (quantized ones as config.json's "
           "quantization_config describes)");
    }
  }
  if (!missing.empty()) {
    if (missing.size() == 1) store.Require(missing[0]);
    Fail(ErrorCode::kCorrupt, store.source(), ": tensor ", missing[0], " is missing (and ",
         missing.size() - 1, " more; is this a Qwen3-VL checkpoint matching config.json?)");
  }
  std::unordered_set<std::string_view> known;
  for (const ExpectedTensor& e : expected) known.insert(e.name);
  for (const std::string& name : beside) known.insert(name);
  if (config.tie_word_embeddings)
    known.insert(kLmHead);  // some writers keep the tied copy; it is unused
  size_t unused = 0;
  std::string first;
  for (const TensorInfo* t : store.All()) {
    if (known.count(t->name) != 0) continue;
    if (unused++ == 0) first = t->name;
  }
  if (unused > 0) {
    LogWarn(store.source(), ": ", unused,
            " tensor(s) not used by Qwen3-VL are ignored (first: ", first, ")");
  }
}

std::vector<ExpectedTensor> ExpectedQwen3VLTensors(const ModelConfig& config) {
  const TextConfig& t = config.text;
  const VisionConfig& v = config.vision;
  TensorListBuilder b;

  const std::string text = kText;
  const int64_t d = t.hidden_size, hd = t.head_dim;
  b.Add(text + "embed_tokens.weight", {t.vocab_size, d}, "text", TensorRole::kEmbedding);
  for (int i = 0; i < t.num_layers; ++i) {
    const std::string layer = StrCat(text, "layers.", i, ".");
    b.Add(layer + "input_layernorm.weight", {d}, "text", TensorRole::kNormGain);
    b.Add(layer + "post_attention_layernorm.weight", {d}, "text", TensorRole::kNormGain);
    b.Linear(layer + "mlp.gate_proj", t.intermediate_size, d, "text", false);
    b.Linear(layer + "mlp.up_proj", t.intermediate_size, d, "text", false);
    b.Linear(layer + "mlp.down_proj", d, t.intermediate_size, "text", false);
    b.Linear(layer + "self_attn.q_proj", t.num_heads * hd, d, "text", false);
    b.Linear(layer + "self_attn.k_proj", t.num_kv_heads * hd, d, "text", false);
    b.Linear(layer + "self_attn.v_proj", t.num_kv_heads * hd, d, "text", false);
    b.Linear(layer + "self_attn.o_proj", d, t.num_heads * hd, "text", false);
    b.Add(layer + "self_attn.q_norm.weight", {hd}, "text", TensorRole::kNormGain);
    b.Add(layer + "self_attn.k_norm.weight", {hd}, "text", TensorRole::kNormGain);
  }
  b.Add(text + "norm.weight", {d}, "text", TensorRole::kNormGain);
  if (!config.tie_word_embeddings) b.Linear("lm_head", t.vocab_size, d, "text", false);

  const std::string visual = kVisual;
  const int64_t dv = v.hidden_size;
  const int64_t merged = dv * v.spatial_merge_size * v.spatial_merge_size;
  b.Add(visual + "patch_embed.proj.weight",
        {dv, v.in_channels, v.temporal_patch_size, v.patch_size, v.patch_size}, "vision",
        TensorRole::kMatrix);
  b.Add(visual + "patch_embed.proj.bias", {dv}, "vision", TensorRole::kBias);
  b.Add(visual + "pos_embed.weight", {v.num_position_embeddings, dv}, "vision",
        TensorRole::kEmbedding);
  for (int i = 0; i < v.depth; ++i) {
    const std::string block = StrCat(visual, "blocks.", i, ".");
    b.LayerNorm(block + "norm1", dv, "vision");
    b.LayerNorm(block + "norm2", dv, "vision");
    b.Linear(block + "attn.qkv", 3 * dv, dv, "vision", true);
    b.Linear(block + "attn.proj", dv, dv, "vision", true);
    b.Linear(block + "mlp.linear_fc1", v.intermediate_size, dv, "vision", true);
    b.Linear(block + "mlp.linear_fc2", dv, v.intermediate_size, "vision", true);
  }
  b.Merger(visual + "merger", dv, merged, v.out_hidden_size);
  for (size_t j = 0; j < v.deepstack_visual_indexes.size(); ++j) {
    b.Merger(StrCat(visual, "deepstack_merger_list.", j), merged, merged, v.out_hidden_size);
  }
  return b.Sorted();
}

Qwen3VLWeights MapQwen3VLWeights(const TensorStore& store, const ModelConfig& config) {
  CheckQwen3VLTensors(store, config);
  Qwen3VLWeights w;
  const WeightCarver c(store, config.weight_quant, &w.quant_params);

  const std::string visual = kVisual;
  VisionWeights& vis = w.vision;
  vis.patch_embed = c.Matrix(visual + "patch_embed.proj.weight");
  vis.patch_embed_b = c.Vector(visual + "patch_embed.proj.bias");
  vis.pos_embed = c.Matrix(visual + "pos_embed.weight");
  vis.blocks.resize(static_cast<size_t>(config.vision.depth));
  for (size_t i = 0; i < vis.blocks.size(); ++i) {
    const std::string p = StrCat(visual, "blocks.", i, ".");
    VisionBlockWeights& blk = vis.blocks[i];
    c.LayerNorm(p + "norm1", &blk.norm1_w, &blk.norm1_b);
    c.Linear(p + "attn.qkv", &blk.qkv, &blk.qkv_b);
    c.Linear(p + "attn.proj", &blk.proj, &blk.proj_b);
    c.LayerNorm(p + "norm2", &blk.norm2_w, &blk.norm2_b);
    c.Linear(p + "mlp.linear_fc1", &blk.fc1, &blk.fc1_b);
    c.Linear(p + "mlp.linear_fc2", &blk.fc2, &blk.fc2_b);
  }
  const auto merger = [&](const std::string& p) {
    MergerWeights m;
    c.LayerNorm(p + ".norm", &m.norm_w, &m.norm_b);
    c.Linear(p + ".linear_fc1", &m.fc1, &m.fc1_b);
    c.Linear(p + ".linear_fc2", &m.fc2, &m.fc2_b);
    return m;
  };
  vis.merger = merger(visual + "merger");
  for (size_t j = 0; j < config.vision.deepstack_visual_indexes.size(); ++j) {
    vis.deepstack_mergers.push_back(merger(StrCat(visual, "deepstack_merger_list.", j)));
  }

  const std::string text = kText;
  TextWeights& tw = w.text;
  tw.embed_tokens = c.Matrix(text + "embed_tokens.weight");
  tw.layers.resize(static_cast<size_t>(config.text.num_layers));
  for (size_t i = 0; i < tw.layers.size(); ++i) {
    const std::string p = StrCat(text, "layers.", i, ".");
    TextLayerWeights& l = tw.layers[i];
    l.input_norm = c.Vector(p + "input_layernorm.weight");
    l.q_proj = c.Matrix(p + "self_attn.q_proj.weight");
    l.k_proj = c.Matrix(p + "self_attn.k_proj.weight");
    l.v_proj = c.Matrix(p + "self_attn.v_proj.weight");
    l.o_proj = c.Matrix(p + "self_attn.o_proj.weight");
    l.q_norm = c.Vector(p + "self_attn.q_norm.weight");
    l.k_norm = c.Vector(p + "self_attn.k_norm.weight");
    l.post_attention_norm = c.Vector(p + "post_attention_layernorm.weight");
    l.gate_proj = c.Matrix(p + "mlp.gate_proj.weight");
    l.up_proj = c.Matrix(p + "mlp.up_proj.weight");
    l.down_proj = c.Matrix(p + "mlp.down_proj.weight");
  }
  tw.norm = c.Vector(text + "norm.weight");
  tw.lm_head = config.tie_word_embeddings ? tw.embed_tokens : c.Matrix(kLmHead);
  return w;
}

}  // namespace qvl
