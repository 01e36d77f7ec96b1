// The typed weights of Qwen3-VL, carved out of the checkpoint by name
// (transformers' Qwen3VLForConditionalGeneration state dict). Matrices stay in the
// mapped files (WeightView); norm gains and biases, which are tiny, are decoded to f32.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "model/config.h"
#include "model/quantized_weights.h"
#include "model/safetensors.h"
#include "ops/weight_view.h"

namespace qvl {

struct VisionBlockWeights {
  std::vector<float> norm1_w, norm1_b;  // [Dv]      LayerNorm before attention
  WeightView qkv;                       // [3Dv, Dv] rows: q | k | v, each head-major
  std::vector<float> qkv_b;             // [3Dv]
  WeightView proj;                      // [Dv, Dv]
  std::vector<float> proj_b;            // [Dv]
  std::vector<float> norm2_w, norm2_b;  // [Dv]      LayerNorm before the MLP
  WeightView fc1;                       // [Iv, Dv]  mlp.linear_fc1
  std::vector<float> fc1_b;             // [Iv]
  WeightView fc2;                       // [Dv, Iv]  mlp.linear_fc2
  std::vector<float> fc2_b;             // [Dv]
};

// The main merger normalizes each patch ([Dv]) before the 2x2 concat; a deepstack
// merger normalizes the concatenated [4Dv] vector. Both then fc1 -> GELU(erf) -> fc2.
struct MergerWeights {
  std::vector<float> norm_w, norm_b;  // [Dv] (main) or [4Dv] (deepstack)
  WeightView fc1;                     // [4Dv, 4Dv]
  std::vector<float> fc1_b;           // [4Dv]
  WeightView fc2;                     // [D, 4Dv]
  std::vector<float> fc2_b;           // [D]
};

struct VisionWeights {
  WeightView patch_embed;            // [Dv, C*T*P*P]: Conv3d kernel [Dv, C, T, P, P] flattened
  std::vector<float> patch_embed_b;  // [Dv]
  WeightView pos_embed;              // [G*G, Dv] learned grid
  std::vector<VisionBlockWeights> blocks;
  MergerWeights merger;
  std::vector<MergerWeights> deepstack_mergers;  // one per deepstack_visual_indexes entry
};

struct TextLayerWeights {
  std::vector<float> input_norm;           // [D] RMSNorm
  WeightView q_proj;                       // [H*hd, D]
  WeightView k_proj;                       // [KV*hd, D]
  WeightView v_proj;                       // [KV*hd, D]
  WeightView o_proj;                       // [D, H*hd]
  std::vector<float> q_norm, k_norm;       // [hd] RMSNorm per head
  std::vector<float> post_attention_norm;  // [D]
  WeightView gate_proj, up_proj;           // [I, D]
  WeightView down_proj;                    // [D, I]
};

struct TextWeights {
  WeightView embed_tokens;  // [V, D]
  std::vector<TextLayerWeights> layers;
  std::vector<float> norm;  // [D] final RMSNorm
  WeightView lm_head;       // [V, D]; the same memory as embed_tokens when tied
};

struct Qwen3VLWeights {
  VisionWeights vision;
  TextWeights text;
  // The f32 block scales and zero points of a pre-quantized checkpoint's weights, which
  // their views point into.
  std::vector<std::vector<float>> quant_params;
};

// What a tensor is, which fixes how a random model initializes it.
enum class TensorRole {
  kMatrix,     // Linear / Conv3d weight: N(0, 1/fan_in)
  kEmbedding,  // embed_tokens, pos_embed: N(0, 1/width)
  kNormGain,   // RMSNorm / LayerNorm weight: 1 + N(0, 0.02^2)
  kBias,       // Linear / LayerNorm bias: N(0, 0.01^2)
};

// Name, dtype-independent shape, part ("vision", "merger", "text") and role of every
// tensor the config implies, in the checkpoint's (lexicographic) order.
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string part;
  TensorRole role = TensorRole::kMatrix;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};
std::vector<ExpectedTensor> ExpectedQwen3VLTensors(const ModelConfig& config);

// A Linear layer's weight: the matrices a pre-quantized checkpoint may store as codes.
inline bool IsLinearWeight(const ExpectedTensor& e) {
  return e.role == TensorRole::kMatrix && e.shape.size() == 2;
}

// Checks the name, shape and dtype of every tensor the config implies, without reading
// tensor data (so a multi-GB folder is validated in milliseconds). Throws the errors
// described for MapQwen3VLWeights; warns once about tensors the model does not use.
void CheckQwen3VLTensors(const TensorStore& store, const ModelConfig& config);

// Maps the store onto typed weights. A missing tensor, a wrong shape or an unsupported
// dtype is an Error(kCorrupt) of one line naming the file and the tensor. A Linear
// layer's weight may be stored as codes when config.weight_quant says how (the view then
// points at its scales and zero points, decoded to f32 in quant_params). Tensors the
// model does not use are logged as one warning. The store must outlive the weights.
Qwen3VLWeights MapQwen3VLWeights(const TensorStore& store, const ModelConfig& config);

}  // namespace qvl
