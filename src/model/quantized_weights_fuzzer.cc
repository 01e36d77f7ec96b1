// libFuzzer target: the weights of a pre-quantized checkpoint. The first byte picks what
// config.json's quantization_config declares for a micro Qwen3-VL (one layer and one
// vision block, widths 16 to 64): 0 compressed-tensors int4 packed with zero points in
// groups of 8, 1 int8 per channel with zero points, 2 Qwen's fp8 in 8x8 blocks, 3
// AutoAWQ's int4 in groups of 8, 4 bitsandbytes' nf4 (its quant_state JSON in each
// weight's tensors), 5 bitsandbytes' int8, 6 GPTQ's int4 with act-order (g_idx) in
// groups of 8. The rest is its model.safetensors, which goes through
// CheckQwen3VLTensors and MapQwen3VLWeights, and every row of every Linear weight of an
// accepted file is decoded.
// Only qvl::Error may come out; a crash or a sanitizer report (a read outside the codes,
// scales or zero points) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "ops/weight_view.h"

namespace {

constexpr char kMicroConfig[] = R"({
  "model_type": "qwen3_vl", "image_token_id": 60, "video_token_id": 59,
  "vision_start_token_id": 57, "vision_end_token_id": 58, "tie_word_embeddings": true,
  "text_config": {"attention_bias": false, "bos_token_id": 61, "eos_token_id": 62,
    "head_dim": 8, "hidden_act": "silu", "hidden_size": 16, "intermediate_size": 32,
    "max_position_embeddings": 4096, "num_attention_heads": 2, "num_hidden_layers": 1,
    "num_key_value_heads": 1, "rms_norm_eps": 1e-06, "rope_theta": 5000000,
    "rope_scaling": {"mrope_interleaved": true, "mrope_section": [2, 1, 1],
                     "rope_type": "default"},
    "tie_word_embeddings": true, "vocab_size": 64},
  "vision_config": {"deepstack_visual_indexes": [0], "depth": 1,
    "hidden_act": "gelu_pytorch_tanh", "hidden_size": 16, "in_channels": 3,
    "intermediate_size": 32, "num_heads": 2, "num_position_embeddings": 16,
    "out_hidden_size": 16, "patch_size": 2, "spatial_merge_size": 2,
    "temporal_patch_size": 2},
  "quantization_config": )";

constexpr const char* kQuantizations[] = {
    R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups":
        {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
         "symmetric": false, "strategy": "group", "group_size": 8}}}}})",
    R"({"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups":
        {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int",
         "symmetric": false, "strategy": "channel"}}}}})",
    R"({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [8, 8]}})",
    R"({"quant_method": "awq", "bits": 4, "group_size": 8, "zero_point": true,
        "version": "gemm"}})",
    R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": true}})",
    R"({"quant_method": "bitsandbytes", "load_in_8bit": true}})",
    R"({"quant_method": "gptq", "bits": 4, "group_size": 8, "desc_act": true, "sym": true,
        "checkpoint_format": "gptq"}})",
};

const std::vector<qvl::ModelConfig>& Configs() {
  static const std::vector<qvl::ModelConfig>* configs = [] {
    auto* c = new std::vector<qvl::ModelConfig>;
    for (const char* q : kQuantizations) {
      c->push_back(qvl::ParseModelConfig(std::string(kMicroConfig) + q, "fuzz/config.json"));
    }
    return c;
  }();
  return *configs;
}

// The scratch file the input is written to, removed when the fuzzer exits.
const std::string& ScratchFile() {
  static const std::string* file = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != 0 ? tmp : "/tmp") +
                          "/qvl_quantized_weights_fuzzer_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    auto* path = new std::string(pattern + "/model.safetensors");
    std::atexit([] { std::filesystem::remove_all(std::filesystem::path(*file).parent_path()); });
    return path;
  }();
  return *file;
}

void DecodeAll(const qvl::WeightView& v) {
  std::vector<float> row(static_cast<size_t>(v.cols));
  for (int64_t r = 0; r < v.rows; ++r) qvl::DecodeWeightRow(v, r, v.cols, row.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const qvl::ModelConfig& config = Configs()[data[0] % Configs().size()];
  {
    std::ofstream file(ScratchFile(), std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    const qvl::TensorStore store({ScratchFile()});
    const qvl::Qwen3VLWeights w = qvl::MapQwen3VLWeights(store, config);
    for (const qvl::VisionBlockWeights& b : w.vision.blocks) {
      for (const qvl::WeightView* v : {&b.qkv, &b.proj, &b.fc1, &b.fc2}) DecodeAll(*v);
    }
    for (const qvl::MergerWeights* m : {&w.vision.merger, &w.vision.deepstack_mergers[0]}) {
      DecodeAll(m->fc1);
      DecodeAll(m->fc2);
    }
    for (const qvl::TextLayerWeights& l : w.text.layers) {
      for (const qvl::WeightView* v :
           {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
        DecodeAll(*v);
      }
    }
  } catch (const qvl::Error&) {
  }
  return 0;
}
