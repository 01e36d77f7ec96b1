#include "model/vision_tower.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "model/vision_positions.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"

namespace qvl {
namespace {

constexpr float kLayerNormEps = 1e-6f;

}  // namespace

TensorTap VideoTensorNames(const TensorTap& tap) {
  return [tap](const std::string& name, const float* data, std::vector<int64_t> shape) {
    std::string video_name;
    if (name == "image_embeds") {
      video_name = "video_embeds";
    } else if (name.starts_with("deepstack.")) {
      video_name = "video_" + name;
    } else {
      video_name = "video." + name;
    }
    tap(video_name, data, std::move(shape));
  };
}

WeightFormat FormatFor(const WeightView& view, MatmulPrecision precision, WeightFormat requested) {
  if (IsPacked(requested)) return requested;
  if (precision == MatmulPrecision::kBF16 || view.dtype == DType::kBF16) return WeightFormat::kBF16;
  return WeightFormat::kF32;
}

VisionTower::VisionTower(const VisionConfig& config, const VisionWeights& weights,
                         MatmulPrecision precision, const LinearPreparer& prepare)
    : config_(config), weights_(&weights), precision_(precision) {
  patch_embed_ = prepare(weights.patch_embed);
  for (const VisionBlockWeights& b : weights.blocks) {
    blocks_.push_back({&b, prepare(b.qkv), prepare(b.proj), prepare(b.fc1), prepare(b.fc2)});
  }
  // bf16 inference attends over bf16 keys and values (vdpbf16ps), as the reference does.
  // Int8 attention (about 1.3x bf16's speed, 1.5x its error) comes with quantized
  // weights, which already trade that much accuracy for speed.
  const bool quantized =
      !blocks_.empty() && std::all_of(blocks_.begin(), blocks_.end(), [](const Block& blk) {
        const WeightFormat f = blk.qkv.format();
        return f == WeightFormat::kQ8 || f == WeightFormat::kQ4 || f == WeightFormat::kW8A8;
      });
  attention_dtype_ = quantized                             ? DType::kI8
                     : precision == MatmulPrecision::kBF16 ? DType::kBF16
                                                           : DType::kF32;
  merger_ = {&weights.merger, prepare(weights.merger.fc1), prepare(weights.merger.fc2)};
  for (const MergerWeights& m : weights.deepstack_mergers) {
    deepstack_.push_back({&m, prepare(m.fc1), prepare(m.fc2)});
  }
}

void VisionTower::RunMerger(const Merger& m, VisionEncoding* enc, bool norm_before_merge,
                            ThreadPool& pool, std::vector<float>* out) const {
  const float* x = enc->h_.data();
  const int64_t n = enc->n_;
  const int64_t dv = config_.hidden_size;
  const int64_t merged = n / 4;
  const int64_t wide = 4 * dv;
  // Consecutive groups of 4 patches form one 2x2 block, so the merge is a reshape:
  // [N, Dv] -> [N/4, 4Dv]. The main merger normalizes each patch before it, a
  // deepstack merger the concatenated vector after it. Mergers run between blocks, when
  // the blocks' scratch is free: h [N, Dv] in normed_, hidden [N/4, 4Dv] in wide_.
  float* h = enc->normed_.data();
  if (norm_before_merge) {
    LayerNorm(x, m.w->norm_w.data(), m.w->norm_b.data(), n, dv, kLayerNormEps, h, &pool);
  } else {
    LayerNorm(x, m.w->norm_w.data(), m.w->norm_b.data(), merged, wide, kLayerNormEps, h, &pool);
  }
  float* hidden = enc->wide_.data();
  MatMul(h, merged, m.fc1, m.w->fc1_b.data(), hidden, precision_, pool);
  GeluErf(hidden, merged * wide, &pool);
  out->resize(merged * m.fc2.rows());
  MatMul(hidden, merged, m.fc2, m.w->fc2_b.data(), out->data(), precision_, pool);
}

VisionOutput VisionTower::Encode(const float* pixel_values, std::span<const GridThw> grids,
                                 ThreadPool& pool, const TensorTap* tap) const {
  VisionEncoding enc;
  Begin(pixel_values, grids, pool, &enc, tap);
  Step(&enc, depth(), pool, tap);
  return std::move(enc.output());
}

void VisionTower::Begin(const float* pixel_values, std::span<const GridThw> grids, ThreadPool& pool,
                        VisionEncoding* enc, const TensorTap* tap) const {
  const int merge = config_.spatial_merge_size;
  const int64_t dv = config_.hidden_size;
  const int hd = static_cast<int>(dv / config_.num_heads);
  enc->grids_.assign(grids.begin(), grids.end());
  enc->segments_ = {0};
  enc->n_ = 0;
  for (const GridThw& g : grids) {
    if (g.h % merge != 0 || g.w % merge != 0) {
      Fail(ErrorCode::kInvalidArgument, "image grid ", g.h, "x", g.w,
           " is not a multiple of the merge size ", merge);
    }
    for (int64_t t = 0; t < g.t; ++t) enc->segments_.push_back(enc->segments_.back() + g.h * g.w);
    enc->n_ += g.patches();
  }
  const int64_t n = enc->n_;

  // x [N, C*T*P*P] -> h [N, Dv]: the Conv3d with stride = kernel is one matmul.
  enc->h_.resize(n * dv);
  MatMul(pixel_values, n, patch_embed_, weights_->patch_embed_b.data(), enc->h_.data(), precision_,
         pool);
  enc->normed_.resize(n * dv);
  float* pos = enc->normed_.data();  // free until the first block's attention
  InterpolatePositionEmbedding(weights_->pos_embed, grids, merge, pos);
  if (tap != nullptr) (*tap)("vision.pos_embed", pos, {n, dv});
  AddInPlace(enc->h_.data(), pos, n * dv, &pool);
  if (tap != nullptr) (*tap)("vision.embed", enc->h_.data(), {n, dv});

  VisionRotaryTables(grids, merge, hd, &enc->cos_, &enc->sin_);
  enc->wide_.resize(n * std::max<int64_t>(3 * dv, config_.intermediate_size));
  enc->output_ = VisionOutput();
  enc->output_.tokens = n / 4;
  enc->output_.deepstack.resize(deepstack_.size());
  enc->next_block_ = 0;
}

void VisionTower::RunBlock(const Block& blk, VisionEncoding* enc, ThreadPool& pool) const {
  const int64_t n = enc->n_;
  const int64_t dv = config_.hidden_size;
  const int heads = config_.num_heads;
  const int hd = static_cast<int>(dv / heads);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* h = enc->h_.data();
  float* qkv = enc->wide_.data();
  float* attn = enc->normed_.data();
  float* mlp = enc->wide_.data();
  // h += proj(attn(LN1(h))); the LayerNorms run inside the matmuls, row by row.
  const InputNorm ln1{blk.w->norm1_w.data(), blk.w->norm1_b.data(), kLayerNormEps};
  // qkv [N, 3Dv] = [q | k | v], each [heads, hd]: q and k rotate as 2*heads heads, as the
  // matmul stores them.
  const OutputRope rope{enc->cos_.data(), enc->sin_.data(), 2 * heads, hd};
  MatMulRope(h, n, blk.qkv, blk.w->qkv_b.data(), qkv, rope, precision_, pool, &ln1);
  SegmentedFullAttention(qkv, qkv + dv, qkv + 2 * dv, 3 * dv, enc->segments_, heads, hd, scale,
                         attention_dtype_, attn, dv, pool);
  MatMulAdd(attn, n, blk.proj, blk.w->proj_b.data(), h, precision_, pool);
  // h += fc2(gelu_tanh(fc1(LN2(h))))
  const InputNorm ln2{blk.w->norm2_w.data(), blk.w->norm2_b.data(), kLayerNormEps};
  MatMulGeluTanh(h, n, blk.fc1, blk.w->fc1_b.data(), mlp, precision_, pool, &ln2);
  MatMulAdd(mlp, n, blk.fc2, blk.w->fc2_b.data(), h, precision_, pool);
}

void VisionTower::Step(VisionEncoding* enc, int max_blocks, ThreadPool& pool,
                       const TensorTap* tap) const {
  if (enc->done()) return;
  const int64_t n = enc->n_;
  const int end = std::min(depth(), enc->next_block_ + max_blocks);
  for (int b = enc->next_block_; b < end; ++b) {
    RunBlock(blocks_[b], enc, pool);
    for (size_t j = 0; j < deepstack_.size(); ++j) {
      if (config_.deepstack_visual_indexes[j] == b) {
        RunMerger(deepstack_[j], enc, /*norm_before_merge=*/false, pool,
                  &enc->output_.deepstack[j]);
      }
    }
  }
  enc->next_block_ = end;
  if (end < depth()) return;

  const int64_t dv = config_.hidden_size;
  if (tap != nullptr) (*tap)("vision.last_hidden", enc->h_.data(), {n, dv});
  RunMerger(merger_, enc, /*norm_before_merge=*/true, pool, &enc->output_.embeds);
  const int64_t d = config_.out_hidden_size;
  if (tap != nullptr) {
    (*tap)("image_embeds", enc->output_.embeds.data(), {enc->output_.tokens, d});
    for (size_t j = 0; j < enc->output_.deepstack.size(); ++j) {
      (*tap)("deepstack." + std::to_string(j), enc->output_.deepstack[j].data(),
             {enc->output_.tokens, d});
    }
  }
  // The scratch is large (hundreds of MB for big images); free it with the result ready.
  for (LargeVector<float>* v : {&enc->h_, &enc->normed_, &enc->wide_})
    LargeVector<float>().swap(*v);
  for (std::vector<float>* v : {&enc->cos_, &enc->sin_}) std::vector<float>().swap(*v);
  ReleaseAttentionScratch();
  enc->next_block_ = -1;
}

}  // namespace qvl
