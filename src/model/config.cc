#include "model/config.h"

#include <sys/stat.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"
#include "base/mapped_file.h"

namespace qvl {
namespace {

// Bounds far above any real model; they keep a hostile config from asking for absurd
// tensor lists or allocations.
constexpr int64_t kMaxWidth = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxTokenId = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxContext = int64_t{1} << 40;

int Width(const JsonFieldReader& r, std::string_view key) {
  return static_cast<int>(r.Int(key, 1, kMaxWidth));
}

void ParseRope(const JsonFieldReader& text, TextConfig* out) {
  // transformers >= 4.58 writes rope_parameters (theta inside); older configs write
  // rope_scaling plus a sibling rope_theta.
  const char* key = text.Has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (!text.Has(key)) text.FailField("rope_scaling", "is missing (it holds mrope_section)");
  const JsonFieldReader rope = text.Object(key);
  const std::string type =
      rope.OptionalString("rope_type").value_or(rope.OptionalString("type").value_or("default"));
  if (type != "default" && type != "mrope") {
    rope.FailField("rope_type", StrCat("\"", type, "\" is not supported (expected \"default\")"));
  }
  const std::vector<int64_t> section = rope.IntList("mrope_section", 0, kMaxWidth);
  if (section.size() != 3) {
    rope.FailField("mrope_section",
                   StrCat("must have 3 entries (temporal, height, width), got ", section.size()));
  }
  for (int i = 0; i < 3; ++i) out->mrope_section[i] = static_cast<int>(section[i]);
  out->mrope_interleaved = rope.OptionalBool("mrope_interleaved", true);
  const std::optional<double> theta = rope.Has("rope_theta") ? rope.OptionalNumber("rope_theta")
                                                             : text.OptionalNumber("rope_theta");
  out->rope_theta = theta.value_or(5000000.0);
  if (!(out->rope_theta > 1.0) || !std::isfinite(out->rope_theta)) {
    (rope.Has("rope_theta") ? rope : text)
        .FailField("rope_theta", StrCat("is ", out->rope_theta, ", must be a finite number > 1"));
  }
}

TextConfig ParseTextConfig(const JsonFieldReader& t) {
  TextConfig c;
  c.hidden_size = Width(t, "hidden_size");
  c.num_layers = static_cast<int>(t.Int("num_hidden_layers", 1, kMaxLayers));
  c.num_heads = static_cast<int>(t.Int("num_attention_heads", 1, kMaxWidth));
  c.num_kv_heads = static_cast<int>(t.Int("num_key_value_heads", 1, kMaxWidth));
  c.head_dim = Width(t, "head_dim");
  c.intermediate_size = Width(t, "intermediate_size");
  c.vocab_size = static_cast<int>(t.Int("vocab_size", 1, kMaxVocab));
  c.rms_norm_eps = static_cast<float>(t.OptionalNumber("rms_norm_eps").value_or(1e-6));
  c.max_position_embeddings =
      t.OptionalInt("max_position_embeddings", 1, kMaxContext).value_or(128000);
  c.hidden_act = t.OptionalString("hidden_act").value_or("silu");
  c.attention_bias = t.OptionalBool("attention_bias", false);
  ParseRope(t, &c);

  if (!(c.rms_norm_eps > 0.0f) || !(c.rms_norm_eps < 1.0f)) {
    t.FailField("rms_norm_eps", StrCat("is ", c.rms_norm_eps, ", must be in (0, 1)"));
  }
  if (c.hidden_act != "silu") {
    t.FailField("hidden_act",
                StrCat("\"", c.hidden_act, "\" is not supported (expected \"silu\")"));
  }
  if (c.attention_bias) {
    t.FailField("attention_bias", "is true; Qwen3-VL attention has no biases and qvl needs false");
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    t.FailField("num_attention_heads", StrCat("(", c.num_heads,
                                              ") is not a multiple of "
                                              "num_key_value_heads (",
                                              c.num_kv_heads, ")"));
  }
  if (c.head_dim % 2 != 0) t.FailField("head_dim", StrCat("is ", c.head_dim, ", must be even"));
  const int section_sum = c.mrope_section[0] + c.mrope_section[1] + c.mrope_section[2];
  if (section_sum != c.head_dim / 2) {
    const std::string rope = t.Has("rope_parameters") ? "rope_parameters" : "rope_scaling";
    t.FailField(rope + ".mrope_section",
                StrCat("[", c.mrope_section[0], ", ", c.mrope_section[1], ", ", c.mrope_section[2],
                       "] sums to ", section_sum, ", must equal head_dim / 2 = ", c.head_dim / 2));
  }
  return c;
}

VisionConfig ParseVisionConfig(const JsonFieldReader& v) {
  VisionConfig c;
  c.depth = static_cast<int>(v.Int("depth", 1, kMaxLayers));
  c.hidden_size = Width(v, "hidden_size");
  c.num_heads = static_cast<int>(v.Int("num_heads", 1, kMaxWidth));
  c.intermediate_size = Width(v, "intermediate_size");
  c.patch_size = static_cast<int>(v.Int("patch_size", 1, 1024));
  c.temporal_patch_size = static_cast<int>(v.Int("temporal_patch_size", 1, 64));
  c.spatial_merge_size = static_cast<int>(v.Int("spatial_merge_size", 1, 64));
  c.in_channels = static_cast<int>(v.Int("in_channels", 1, 64));
  c.out_hidden_size = Width(v, "out_hidden_size");
  c.num_position_embeddings =
      static_cast<int>(v.Int("num_position_embeddings", 1, int64_t{1} << 24));
  for (int64_t index : v.IntList("deepstack_visual_indexes", 0, kMaxLayers)) {
    c.deepstack_visual_indexes.push_back(static_cast<int>(index));
  }
  c.hidden_act = v.OptionalString("hidden_act").value_or("gelu_pytorch_tanh");

  if (c.hidden_act != "gelu_pytorch_tanh") {
    v.FailField("hidden_act",
                StrCat("\"", c.hidden_act, "\" is not supported (expected \"gelu_pytorch_tanh\")"));
  }
  if (c.hidden_size % c.num_heads != 0 || (c.hidden_size / c.num_heads) % 4 != 0) {
    v.FailField("num_heads", StrCat("(", c.num_heads, ") must divide hidden_size (", c.hidden_size,
                                    ") into heads whose size is a multiple of 4"));
  }
  const int grid = static_cast<int>(std::lround(std::sqrt(c.num_position_embeddings)));
  if (grid * grid != c.num_position_embeddings) {
    v.FailField("num_position_embeddings",
                StrCat("is ", c.num_position_embeddings, ", must be a square (G x G grid)"));
  }
  for (size_t j = 0; j < c.deepstack_visual_indexes.size(); ++j) {
    if (c.deepstack_visual_indexes[j] >= c.depth) {
      v.FailField(
          StrCat("deepstack_visual_indexes[", j, "]"),
          StrCat("is ", c.deepstack_visual_indexes[j], ", must be below depth (", c.depth, ")"));
    }
  }
  return c;
}

}  // namespace

ModelConfig ParseModelConfig(std::string_view json, const std::string& source) {
  const nlohmann::json doc = ParseJsonText(json, source);
  const JsonFieldReader top(doc, source, "");
  ModelConfig c;
  c.model_type = top.String("model_type");
  if (c.model_type == "qwen3_vl_moe") {
    top.FailField("model_type",
                  "\"qwen3_vl_moe\" (Mixture-of-Experts Qwen3-VL) is not supported; qvl runs the "
                  "dense Qwen3-VL models (model_type \"qwen3_vl\")");
  }
  if (c.model_type != "qwen3_vl") {
    top.FailField("model_type", StrCat("\"", c.model_type,
                                       "\" is not supported; qvl runs Qwen3-VL (\"qwen3_vl\")"));
  }
  const JsonFieldReader text = top.Object("text_config");
  const JsonFieldReader vision = top.Object("vision_config");
  c.text = ParseTextConfig(text);
  c.vision = ParseVisionConfig(vision);

  const int64_t max_id = c.text.vocab_size - 1;
  c.image_token_id = static_cast<int32_t>(top.Int("image_token_id", 0, max_id));
  c.video_token_id =
      static_cast<int32_t>(top.OptionalInt("video_token_id", 0, max_id).value_or(-1));
  // One id for both would make every image placeholder a video's too.
  if (c.video_token_id == c.image_token_id) {
    top.FailField("video_token_id", StrCat("is ", c.video_token_id,
                                           ", the same as image_token_id; they must differ"));
  }
  c.vision_start_token_id = static_cast<int32_t>(top.Int("vision_start_token_id", 0, max_id));
  c.vision_end_token_id = static_cast<int32_t>(top.Int("vision_end_token_id", 0, max_id));
  // Ids may sit in text_config (the release layout) or at the top level (older writers).
  const JsonFieldReader& ids = text.Has("eos_token_id") || text.Has("bos_token_id") ? text : top;
  c.bos_token_id =
      static_cast<int32_t>(ids.OptionalInt("bos_token_id", 0, kMaxTokenId).value_or(-1));
  // An end-of-sequence id outside the vocabulary could never be generated: answers would
  // run to their token limit.
  for (int64_t id : ids.IntOrIntList("eos_token_id", 0, max_id)) {
    c.eos_token_ids.push_back(static_cast<int32_t>(id));
  }
  c.tie_word_embeddings =
      top.OptionalBool("tie_word_embeddings", text.OptionalBool("tie_word_embeddings", false));
  c.weight_quant = ParseWeightQuantization(top);

  if (c.vision.out_hidden_size != c.text.hidden_size) {
    vision.FailField("out_hidden_size",
                     StrCat("(", c.vision.out_hidden_size, ") must equal text_config.hidden_size (",
                            c.text.hidden_size, ")"));
  }
  if (c.vision.deepstack_visual_indexes.size() > static_cast<size_t>(c.text.num_layers)) {
    vision.FailField(
        "deepstack_visual_indexes",
        StrCat("has ", c.vision.deepstack_visual_indexes.size(),
               " entries, more than text_config.num_hidden_layers (", c.text.num_layers, ")"));
  }
  return c;
}

ModelConfig LoadModelConfig(const std::string& path) {
  return ParseModelConfig(ReadFileToString(path), path);
}

GenerationConfig ParseGenerationConfig(std::string_view json, const std::string& source) {
  const nlohmann::json doc = ParseJsonText(json, source);
  const JsonFieldReader r(doc, source, "");
  GenerationConfig g;
  g.do_sample = r.OptionalBool("do_sample", g.do_sample);
  g.temperature = static_cast<float>(r.OptionalNumber("temperature").value_or(g.temperature));
  g.top_p = static_cast<float>(r.OptionalNumber("top_p").value_or(g.top_p));
  g.top_k = static_cast<int>(r.OptionalInt("top_k", 0, kMaxVocab).value_or(g.top_k));
  g.min_p = static_cast<float>(r.OptionalNumber("min_p").value_or(g.min_p));
  g.repetition_penalty =
      static_cast<float>(r.OptionalNumber("repetition_penalty").value_or(g.repetition_penalty));
  g.max_new_tokens =
      static_cast<int>(r.OptionalInt("max_new_tokens", 1, kMaxTokenId).value_or(g.max_new_tokens));
  for (int64_t id : r.IntOrIntList("eos_token_id", 0, kMaxTokenId)) {
    g.eos_token_ids.push_back(static_cast<int32_t>(id));
  }
  g.pad_token_id = static_cast<int32_t>(r.OptionalInt("pad_token_id", 0, kMaxTokenId).value_or(-1));
  g.bos_token_id = static_cast<int32_t>(r.OptionalInt("bos_token_id", 0, kMaxTokenId).value_or(-1));

  if (!(g.temperature >= 0.0f) || !std::isfinite(g.temperature)) {
    r.FailField("temperature", StrCat("is ", g.temperature, ", must be >= 0"));
  }
  if (!(g.top_p > 0.0f && g.top_p <= 1.0f)) {
    r.FailField("top_p", StrCat("is ", g.top_p, ", must be in (0, 1]"));
  }
  if (!(g.min_p >= 0.0f && g.min_p <= 1.0f)) {
    r.FailField("min_p", StrCat("is ", g.min_p, ", must be in [0, 1]"));
  }
  if (!(g.repetition_penalty > 0.0f) || !std::isfinite(g.repetition_penalty)) {
    r.FailField("repetition_penalty", StrCat("is ", g.repetition_penalty, ", must be > 0"));
  }
  return g;
}

GenerationConfig LoadGenerationConfig(const std::string& path, const ModelConfig& model) {
  struct stat st;
  GenerationConfig g;
  if (::stat(path.c_str(), &st) == 0) g = ParseGenerationConfig(ReadFileToString(path), path);
  for (size_t i = 0; i < g.eos_token_ids.size(); ++i) {
    if (g.eos_token_ids[i] >= model.text.vocab_size) {
      Fail(ErrorCode::kCorrupt, path, ": eos_token_id ", g.eos_token_ids[i],
           " is not in the vocabulary (0 to ", model.text.vocab_size - 1,
           ", text_config.vocab_size of config.json): answers could never end");
    }
  }
  if (g.eos_token_ids.empty()) g.eos_token_ids = model.eos_token_ids;
  if (g.bos_token_id < 0) g.bos_token_id = model.bos_token_id;
  return g;
}

}  // namespace qvl
