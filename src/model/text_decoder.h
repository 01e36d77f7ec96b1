// The Qwen3-VL text decoder: token embeddings (image rows replaced by vision features),
// pre-norm layers with q/k-normed grouped-query attention under interleaved M-RoPE and a
// SwiGLU MLP, DeepStack features added after the first layers, final RMSNorm and the tied
// output projection. Mirrors transformers' Qwen3VLTextModel.forward.
//
// One Forward runs a batch of chunks from different sequences together (prefill chunks
// and single-token decode steps alike), so each weight matrix is read once per step.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "base/large_buffer.h"
#include "base/thread_pool.h"
#include "model/config.h"
#include "model/kv_pool.h"
#include "model/linear_preparer.h"
#include "model/mrope.h"
#include "model/vision_tower.h"
#include "model/weights.h"
#include "ops/linear.h"

namespace qvl {

// Vision features of a sequence's image and video pad tokens, one row pointer per pad
// token in prompt order (images and videos together, as they appear), pointing into the vision
// encodings (no copies): embeds[k] ([D]) replaces the k-th pad token's embedding; deepstack[l][k]
// is added to its hidden state after decoder layer l.
struct VisualFeatures {
  std::vector<const float*> embeds;
  std::vector<std::vector<const float*>> deepstack;
};

// Tokens [cache_start, cache_start + n) of one sequence.
struct DecoderChunk {
  std::span<const int32_t> tokens;
  std::array<const int32_t*, 3> positions = {};  // M-RoPE rows, n each
  int64_t cache_start = 0;                       // slots already in the cache
  const int32_t* pages = nullptr;                // block table covering cache_start + n slots
  // Features of the sequence's pad tokens; the chunk's first pad token is number
  // `visual_offset` of the sequence (pad tokens before this chunk).
  const VisualFeatures* visual = nullptr;
  int64_t visual_offset = 0;
  // Logits of the chunk's last `logit_rows` tokens: 1 for a prompt's end or a decode step,
  // more to verify drafted tokens (engine/draft_lookup.h), 0 for none.
  int64_t logit_rows = 0;
};

class TextDecoder {
 public:
  // `precision` applies to row-major (f32 / bf16) weights; `prepare` makes each weight.
  TextDecoder(const ModelConfig& config, const TextWeights& weights, MatmulPrecision precision,
              const LinearPreparer& prepare);

  // Writes vocab_size logits for each of every chunk's logit_rows last tokens, in chunk
  // and token order.
  void Forward(std::span<const DecoderChunk> chunks, KvPool& kv, ThreadPool& pool, float* logits,
               const TensorTap* tap = nullptr);

  const TextConfig& config() const { return config_.text; }

  // The last Forward's final-normed hidden state of its logit row `row` (the order of the
  // logits), hidden_size floats: what the output projection turned into those logits, and
  // an embed request's embedding before it is scaled (engine/request.h).
  std::span<const float> FinalNormedRow(int64_t row) const {
    const int64_t d = config_.text.hidden_size;
    return std::span<const float>(last_).subspan(row * d, d);
  }

  // Bytes of weight matrices one decode step reads (every layer's and the output
  // projection's): with the KV cache, what bounds decode speed by memory bandwidth.
  size_t weight_bytes() const;

 private:
  struct Layer {
    const TextLayerWeights* w;
    LinearWeight q, k, v, o, gate, up, down;
  };
  void EnsureCapacity(int64_t tokens);
  // Image and video pad tokens take their rows from the chunk's VisualFeatures.
  bool IsVisualToken(int32_t id) const {
    return id == config_.image_token_id ||
           (config_.video_token_id >= 0 && id == config_.video_token_id);
  }
  void Embed(std::span<const DecoderChunk> chunks);

  ModelConfig config_;
  const TextWeights* weights_;
  MatmulPrecision precision_;
  std::vector<Layer> layers_;
  LinearWeight lm_head_;
  MropeTables rope_;

  // Activations, grown to the largest batch seen and then reused. Attention and MLP
  // take turns in two wide buffers: q and k, then the gate, in wide_a_; v and the
  // attention output, then the up projection, in wide_b_.
  int64_t capacity_ = 0;
  LargeVector<float> x_, wide_a_, wide_b_;
  std::vector<float> cos_, sin_;
  std::vector<int32_t> pos_[3];
  std::vector<CausalAttentionJob> jobs_;
  std::vector<float> last_;  // final-normed rows that produce logits
};

}  // namespace qvl
