#include "model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "base/bf16.h"
#include "base/error.h"
#include "base/log.h"

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

// Looks tensors up by name after every expected tensor has been checked. The f32 scales
// and zero points of quantized weights go to `params`, which the views point into.
class WeightCarver {
 public:
  WeightCarver(const TensorStore& store, const WeightQuantization& quant,
               std::vector<std::vector<float>>* params)
      : store_(store), quant_(quant), params_(params) {}

  WeightView Matrix(const std::string& name) const {
    const TensorInfo* t = store_.Find(name);
    if (t == nullptr || !IsFloatWeight(t->dtype)) {
      return QuantizedWeightView(store_, quant_, name, params_);
    }
    WeightView w;
    w.dtype = t->dtype;
    w.rows = t->shape.empty() ? 1 : t->shape[0];
    w.cols = w.rows == 0 ? 0 : t->numel() / w.rows;
    w.data = t->data;
    return w;
  }

  std::vector<float> Vector(const std::string& name) const {
    return FloatValues(store_.Require(name));
  }

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
  const TensorStore& store_;
  WeightQuantization quant_;
  std::vector<std::vector<float>>* params_;
};

// The quantized weight `e` whose codes are `t`, which only a Linear layer's weight may be.
void CheckCodes(const TensorStore& store, const WeightQuantization& q, const ExpectedTensor& e,
                const TensorInfo& t, std::vector<std::string>* known) {
  if (!IsLinearWeight(e)) {
    Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " has dtype ", DTypeName(t.dtype),
         "; qvl reads quantized codes only for the weights of Linear layers");
  }
  CheckQuantizedWeight(store, q, e.name, e.shape, t, known);
}

}  // namespace

void CheckQwen3VLTensors(const TensorStore& store, const ModelConfig& config) {
  const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(config);
  const WeightQuantization& q = config.weight_quant;
  std::vector<std::string> missing;
  std::vector<std::string> beside;  // scales, zero points and shapes of quantized weights
  for (const ExpectedTensor& e : expected) {
    const TensorInfo* t = store.Find(e.name);
    if (t == nullptr && q.packed() && IsLinearWeight(e)) {
      if (const TensorInfo* packed = store.Find(QuantizedNames(e.name, q).codes)) {
        CheckCodes(store, q, e, *packed, &beside);
        beside.push_back(packed->name);
        continue;
      }
    }
    if (t == nullptr) {
      missing.push_back(e.name);
      continue;
    }
    if (t->dtype == DType::kU8) {  // bitsandbytes' 4-bit codes, [ceil(out x in / 2), 1]
      CheckCodes(store, q, e, *t, &beside);
      continue;
    }
    if (t->shape != e.shape) {
      Fail(ErrorCode::kCorrupt, *t->file, ": tensor ", e.name, " has shape ", t->ShapeString(),
           ", expected ", FormatShape(e.shape));
    }
    if (t->dtype == DType::kF8E4M3 || t->dtype == DType::kI8) {
      CheckCodes(store, q, e, *t, &beside);
    } else if (!IsFloatWeight(t->dtype)) {
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