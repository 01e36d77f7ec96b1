#include "model/vision_tower.h"

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "model/vision_positions.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace qvl {
namespace {

constexpr float kLayerNormEps = 1e-6f;

}  // namespace

WeightFormat FormatFor(const WeightView& view, MatmulPrecision precision) {
  if (precision == MatmulPrecision::kBF16 || view.dtype == DType::kBF16) return WeightFormat::kBF16;
  return WeightFormat::kF32;
}

VisionTower::VisionTower(const VisionConfig& config, const VisionWeights& weights,
                         MatmulPrecision precision)
    : config_(config), weights_(&weights), precision_(precision) {
  auto prepare = [&](const WeightView& v) { return LinearWeight::Prepare(v, FormatFor(v, precision)); };
  patch_embed_ = prepare(weights.patch_embed);
  for (const VisionBlockWeights& b : weights.blocks) {
    blocks_.push_back({&b, prepare(b.qkv), prepare(b.proj), prepare(b.fc1), prepare(b.fc2)});
  }
  merger_ = {&weights.merger, prepare(weights.merger.fc1), prepare(weights.merger.fc2)};
  for (const MergerWeights& m : weights.deepstack_mergers) {
    deepstack_.push_back({&m, prepare(m.fc1), prepare(m.fc2)});
  }
}

void VisionTower::RunMerger(const Merger& m, const float* x, int64_t n, bool norm_before_merge,
                            ThreadPool& pool, std::vector<float>* out) const {
  const int64_t dv = config_.hidden_size;
  const int64_t merged = n / 4;
  const int64_t wide = 4 * dv;
  // Consecutive groups of 4 patches form one 2x2 block, so the merge is a reshape:
  // [N, Dv] -> [N/4, 4Dv]. The main merger normalizes each patch before it, a
  // deepstack merger the concatenated vector after it.
  std::vector<float> h(n * dv);
  if (norm_before_merge) {
    LayerNorm(x, m.w->norm_w.data(), m.w->norm_b.data(), n, dv, kLayerNormEps, h.data());
  } else {
    LayerNorm(x, m.w->norm_w.data(), m.w->norm_b.data(), merged, wide, kLayerNormEps, h.data());
  }
  std::vector<float> hidden(merged * wide);
  MatMul(h.data(), merged, m.fc1, m.w->fc1_b.data(), hidden.data(), precision_, pool);
  GeluErf(hidden.data(), merged * wide);
  out->resize(merged * m.fc2.rows());
  MatMul(hidden.data(), merged, m.fc2, m.w->fc2_b.data(), out->data(), precision_, pool);
}

VisionOutput VisionTower::Encode(const float* pixel_values, std::span<const GridThw> grids,
                                 ThreadPool& pool, const TensorTap* tap) const {
  const int merge = config_.spatial_merge_size;
  const int64_t dv = config_.hidden_size;
  const int heads = config_.num_heads;
  const int hd = static_cast<int>(dv / heads);
  int64_t n = 0;
  std::vector<int64_t> segments = {0};  // one attention segment per frame
  for (const GridThw& g : grids) {
    if (g.h % merge != 0 || g.w % merge != 0) {
      Fail(ErrorCode::kInvalidArgument, "image grid ", g.h, "x", g.w, " is not a multiple of the merge size ", merge);
    }
    for (int64_t t = 0; t < g.t; ++t) segments.push_back(segments.back() + g.h * g.w);
    n += g.patches();
  }
  auto emit = [&](const char* name, const float* data, std::vector<int64_t> shape) {
    if (tap != nullptr) (*tap)(name, data, std::move(shape));
  };

  // x [N, C*T*P*P] -> h [N, Dv]: the Conv3d with stride = kernel is one matmul.
  std::vector<float> h(n * dv);
  MatMul(pixel_values, n, patch_embed_, weights_->patch_embed_b.data(), h.data(), precision_, pool);
  std::vector<float> pos(n * dv);
  InterpolatePositionEmbedding(weights_->pos_embed, grids, merge, pos.data());
  emit("vision.pos_embed", pos.data(), {n, dv});
  AddInPlace(h.data(), pos.data(), n * dv);
  emit("vision.embed", h.data(), {n, dv});

  std::vector<float> cos, sin;
  VisionRotaryTables(grids, merge, hd, &cos, &sin);

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t iv = config_.intermediate_size;
  std::vector<float> normed(n * dv), qkv(n * 3 * dv), attn(n * dv), proj(n * dv), mlp(n * iv);
  VisionOutput out;
  out.tokens = n / 4;
  out.deepstack.resize(deepstack_.size());
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& blk = blocks_[b];
    // h += proj(attn(LN1(h)))
    LayerNorm(h.data(), blk.w->norm1_w.data(), blk.w->norm1_b.data(), n, dv, kLayerNormEps, normed.data());
    MatMul(normed.data(), n, blk.qkv, blk.w->qkv_b.data(), qkv.data(), precision_, pool);
    // qkv [N, 3Dv] = [q | k | v], each [heads, hd].
    ApplyRope(qkv.data(), n, heads, hd, 3 * dv, cos.data(), sin.data());
    ApplyRope(qkv.data() + dv, n, heads, hd, 3 * dv, cos.data(), sin.data());
    SegmentedFullAttention(qkv.data(), qkv.data() + dv, qkv.data() + 2 * dv, 3 * dv, segments,
                           heads, hd, scale, attn.data(), dv, pool);
    MatMul(attn.data(), n, blk.proj, blk.w->proj_b.data(), proj.data(), precision_, pool);
    AddInPlace(h.data(), proj.data(), n * dv);
    // h += fc2(gelu_tanh(fc1(LN2(h))))
    LayerNorm(h.data(), blk.w->norm2_w.data(), blk.w->norm2_b.data(), n, dv, kLayerNormEps, normed.data());
    MatMul(normed.data(), n, blk.fc1, blk.w->fc1_b.data(), mlp.data(), precision_, pool);
    GeluTanh(mlp.data(), n * iv);
    MatMul(mlp.data(), n, blk.fc2, blk.w->fc2_b.data(), proj.data(), precision_, pool);
    AddInPlace(h.data(), proj.data(), n * dv);

    for (size_t j = 0; j < deepstack_.size(); ++j) {
      if (config_.deepstack_visual_indexes[j] == static_cast<int>(b)) {
        RunMerger(deepstack_[j], h.data(), n, /*norm_before_merge=*/false, pool, &out.deepstack[j]);
      }
    }
  }
  emit("vision.last_hidden", h.data(), {n, dv});
  RunMerger(merger_, h.data(), n, /*norm_before_merge=*/true, pool, &out.embeds);
  const int64_t d = config_.out_hidden_size;
  emit("image_embeds", out.embeds.data(), {out.tokens, d});
  for (size_t j = 0; j < out.deepstack.size(); ++j) {
    emit(("deepstack." + std::to_string(j)).c_str(), out.deepstack[j].data(), {out.tokens, d});
  }
  return out;
}

}  // namespace qvl
