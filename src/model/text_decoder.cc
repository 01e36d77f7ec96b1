#include "model/text_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/bf16.h"
#include "base/error.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace qvl {
namespace {

void DecodeRow(const WeightView& table, int64_t row, float* out) {
  const int64_t d = table.cols;
  switch (table.dtype) {
    case DType::kF32:
      std::memcpy(out, static_cast<const float*>(table.data) + row * d, d * sizeof(float));
      return;
    case DType::kBF16: {
      const uint16_t* src = static_cast<const uint16_t*>(table.data) + row * d;
      for (int64_t i = 0; i < d; ++i) out[i] = Bf16ToF32(src[i]);
      return;
    }
    case DType::kF16: {
      const uint16_t* src = static_cast<const uint16_t*>(table.data) + row * d;
      for (int64_t i = 0; i < d; ++i) out[i] = F16ToF32(src[i]);
      return;
    }
    default:
      Fail(ErrorCode::kInternal, "embedding table has dtype ", DTypeName(table.dtype));
  }
}

}  // namespace

TextDecoder::TextDecoder(const ModelConfig& config, const TextWeights& weights,
                         MatmulPrecision precision, const LinearPreparer& prepare)
    : config_(config), weights_(&weights), precision_(precision), rope_(config.text) {
  for (const TextLayerWeights& l : weights.layers) {
    layers_.push_back({&l, prepare(l.q_proj), prepare(l.k_proj), prepare(l.v_proj),
                       prepare(l.o_proj), prepare(l.gate_proj), prepare(l.up_proj),
                       prepare(l.down_proj)});
  }
  lm_head_ = prepare(weights.lm_head);
}

size_t TextDecoder::weight_bytes() const {
  size_t bytes = lm_head_.bytes();
  for (const Layer& l : layers_) {
    for (const LinearWeight* w : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      bytes += w->bytes();
    }
  }
  return bytes;
}

void TextDecoder::EnsureCapacity(int64_t tokens) {
  if (tokens <= capacity_) return;
  const TextConfig& c = config_.text;
  const int64_t d = c.hidden_size, qd = int64_t{c.num_heads} * c.head_dim,
                kvd = int64_t{c.num_kv_heads} * c.head_dim, inter = c.intermediate_size;
  x_.resize(tokens * d);
  const int64_t wide = std::max(qd + kvd, inter);
  wide_a_.resize(tokens * wide);
  wide_b_.resize(tokens * wide);
  cos_.resize(tokens * c.head_dim / 2);
  sin_.resize(tokens * c.head_dim / 2);
  for (auto& p : pos_) p.resize(tokens);
  capacity_ = tokens;
}

void TextDecoder::Embed(std::span<const DecoderChunk> chunks) {
  const int64_t d = config_.text.hidden_size;
  int64_t row = 0;
  for (const DecoderChunk& c : chunks) {
    int64_t visual = 0;
    for (size_t i = 0; i < c.tokens.size(); ++i, ++row) {
      const int32_t id = c.tokens[i];
      if (IsVisualToken(id) && c.visual != nullptr) {
        const int64_t k = c.visual_offset + visual++;
        if (k >= static_cast<int64_t>(c.visual->embeds.size())) {
          Fail(ErrorCode::kInvalidArgument, "more image and video pad tokens than features (",
               c.visual->embeds.size(), ")");
        }
        std::memcpy(&x_[row * d], c.visual->embeds[k], d * sizeof(float));
      } else {
        if (id < 0 || id >= weights_->embed_tokens.rows) {
          Fail(ErrorCode::kInvalidArgument, "token id ", id, " is outside the vocabulary (",
               weights_->embed_tokens.rows, ")");
        }
        DecodeRow(weights_->embed_tokens, id, &x_[row * d]);
      }
      for (int r = 0; r < 3; ++r) pos_[r][row] = c.positions[r][i];
    }
  }
}

void TextDecoder::Forward(std::span<const DecoderChunk> chunks, KvPool& kv, ThreadPool& pool,
                          float* logits, const TensorTap* tap) {
  const TextConfig& c = config_.text;
  const int64_t d = c.hidden_size, hd = c.head_dim;
  const int heads = c.num_heads, kv_heads = c.num_kv_heads;
  const int64_t qd = heads * hd, kvd = kv_heads * hd;
  int64_t total = 0;
  for (const DecoderChunk& ch : chunks) total += static_cast<int64_t>(ch.tokens.size());
  if (total == 0) return;
  EnsureCapacity(total);
  Embed(chunks);
  rope_.Compute(pos_[0].data(), pos_[1].data(), pos_[2].data(), total, cos_.data(), sin_.data());

  // q [T, H, hd], k [T, KV, hd] | gate [T, I]   (wide_a_)
  // v [T, KV, hd], attn [T, H, hd] | up [T, I]  (wide_b_)
  float* const q = wide_a_.data();
  float* const k = q + total * qd;
  float* const v = wide_b_.data();
  float* const attn = v + total * kvd;
  float* const gate = wide_a_.data();
  float* const up = wide_b_.data();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const size_t num_deepstack = config_.vision.deepstack_visual_indexes.size();
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    // Attention: q [T, H, hd], k/v [T, KV, hd]; q/k normed per head, then rotated.
    // The RMSNorms run inside the matmuls, row by row.
    const InputNorm input_norm{layer.w->input_norm.data(), nullptr, c.rms_norm_eps};
    const MatMulOutput qkv[] = {
        {&layer.q, nullptr, q}, {&layer.k, nullptr, k}, {&layer.v, nullptr, v}};
    MatMuls(x_.data(), total, qkv, precision_, pool, &input_norm);
    RmsNormRope(q, layer.w->q_norm.data(), c.rms_norm_eps, total, heads, static_cast<int>(hd), qd,
                cos_.data(), sin_.data(), &pool);
    RmsNormRope(k, layer.w->k_norm.data(), c.rms_norm_eps, total, kv_heads, static_cast<int>(hd),
                kvd, cos_.data(), sin_.data(), &pool);

    jobs_.clear();
    int64_t row = 0;
    for (const DecoderChunk& ch : chunks) {
      const int64_t n = static_cast<int64_t>(ch.tokens.size());
      const KvLayerView view = kv.Layer(static_cast<int>(l), ch.pages);
      StoreKv(view, ch.cache_start, n, kv_heads, static_cast<int>(hd), &k[row * kvd], &v[row * kvd],
              kvd);
      CausalAttentionJob job;
      job.q = &q[row * qd];
      job.out = &attn[row * qd];
      job.n_q = n;
      job.q_start = ch.cache_start;
      job.kv = view;
      jobs_.push_back(job);
      row += n;
    }
    CausalAttention(jobs_, heads, kv_heads, static_cast<int>(hd), scale, pool);
    MatMulAdd(attn, total, layer.o, nullptr, x_.data(), precision_, pool);

    // MLP: x += down(silu(gate(RMS(x))) * up(RMS(x)))
    const InputNorm post_norm{layer.w->post_attention_norm.data(), nullptr, c.rms_norm_eps};
    const MatMulOutput gate_up[] = {{&layer.gate, nullptr, gate}, {&layer.up, nullptr, up}};
    MatMuls(x_.data(), total, gate_up, precision_, pool, &post_norm);
    MatMulAddSwiGlu(gate, up, total, layer.down, nullptr, x_.data(), precision_, pool);

    // DeepStack: the first layers add the vision tower's intermediate features at the
    // image positions.
    if (l < num_deepstack) {
      row = 0;
      for (const DecoderChunk& ch : chunks) {
        if (ch.visual != nullptr && l < ch.visual->deepstack.size()) {
          const std::vector<const float*>& rows = ch.visual->deepstack[l];
          int64_t feature = ch.visual_offset;
          for (size_t i = 0; i < ch.tokens.size(); ++i) {
            if (!IsVisualToken(ch.tokens[i])) continue;
            AddInPlace(&x_[(row + static_cast<int64_t>(i)) * d], rows[feature++], d);
          }
        }
        row += static_cast<int64_t>(ch.tokens.size());
      }
    }
    if (tap != nullptr) (*tap)("text.layer_out." + std::to_string(l), x_.data(), {total, d});
  }

  // Final norm and logits for the last tokens of each chunk that wants them.
  int64_t wanted = 0;
  for (const DecoderChunk& ch : chunks) wanted += ch.logit_rows;
  if (wanted == 0) return;
  last_.resize(wanted * d);
  int64_t row = 0, out = 0;
  for (const DecoderChunk& ch : chunks) {
    row += static_cast<int64_t>(ch.tokens.size());
    if (ch.logit_rows == 0) continue;
    RmsNorm(&x_[(row - ch.logit_rows) * d], weights_->norm.data(), ch.logit_rows, d, d,
            c.rms_norm_eps, &last_[out * d]);
    out += ch.logit_rows;
  }
  if (tap != nullptr) (*tap)("text.final_norm_last", &last_[(wanted - 1) * d], {d});
  MatMul(last_.data(), wanted, lm_head_, nullptr, logits, precision_, pool);
  if (tap != nullptr)
    (*tap)("logits_last", logits + (wanted - 1) * lm_head_.rows(), {lm_head_.rows()});
}

}  // namespace qvl
