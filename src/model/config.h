// Hyper-parameters of a Qwen3-VL model, read only from the folder's config.json and
// generation_config.json. Mirrors transformers' Qwen3VLConfig / Qwen3VLTextConfig /
// Qwen3VLVisionConfig / GenerationConfig.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/quantization_config.h"

namespace qvl {

struct TextConfig {
  int hidden_size = 0;   // D
  int num_layers = 0;    // num_hidden_layers
  int num_heads = 0;     // num_attention_heads
  int num_kv_heads = 0;  // num_key_value_heads
  int head_dim = 0;      // head_dim (num_heads * head_dim may differ from D)
  int intermediate_size = 0;
  int vocab_size = 0;
  float rms_norm_eps = 1e-6f;
  double rope_theta = 0;
  std::array<int, 3> mrope_section = {0, 0, 0};  // (temporal, height, width) frequency counts
  bool mrope_interleaved = false;
  int64_t max_position_embeddings = 0;
  std::string hidden_act;  // "silu"
  bool attention_bias = false;
};

struct VisionConfig {
  int depth = 0;
  int hidden_size = 0;  // Dv
  int num_heads = 0;
  int intermediate_size = 0;
  int patch_size = 0;
  int temporal_patch_size = 0;
  int spatial_merge_size = 0;
  int in_channels = 0;
  int out_hidden_size = 0;          // D of the text model
  int num_position_embeddings = 0;  // G*G
  std::vector<int> deepstack_visual_indexes;
  std::string hidden_act;  // "gelu_pytorch_tanh"
};

struct ModelConfig {
  std::string model_type;  // "qwen3_vl"
  TextConfig text;
  VisionConfig vision;
  int32_t image_token_id = -1;
  int32_t video_token_id = -1;
  int32_t vision_start_token_id = -1;
  int32_t vision_end_token_id = -1;
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;  // from text_config.eos_token_id (int or list)
  bool tie_word_embeddings = false;
  WeightQuantization weight_quant;  // from quantization_config
};

// Parses config.json text. `source` names the file in errors. Throws Error(kCorrupt)
// naming the file and the field for malformed JSON, a missing or mistyped field, an
// unsupported model_type / activation, or values that contradict each other.
ModelConfig ParseModelConfig(std::string_view json, const std::string& source);
ModelConfig LoadModelConfig(const std::string& path);

// Sampling defaults of generation_config.json; a request's own values override them.
struct GenerationConfig {
  bool do_sample = false;
  float temperature = 1.0f;
  float top_p = 1.0f;
  int top_k = 0;  // 0 = off
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  int max_new_tokens = 0;  // 0 = not set
  std::vector<int32_t> eos_token_ids;
  int32_t pad_token_id = -1;
  int32_t bos_token_id = -1;
};

GenerationConfig ParseGenerationConfig(std::string_view json, const std::string& source);
// A missing file gives the defaults above with eos taken from `model`.
GenerationConfig LoadGenerationConfig(const std::string& path, const ModelConfig& model);

}  // namespace qvl
