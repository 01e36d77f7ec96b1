// The Qwen3-VL vision tower: patch embedding, learned position embedding, 2-D rotary
// attention blocks, the patch merger and the DeepStack mergers. Mirrors transformers'
// Qwen3VLVisionModel.forward. Several images are encoded in one pass; attention never
// crosses an image (or a video frame).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/large_buffer.h"
#include "base/thread_pool.h"
#include "model/config.h"
#include "model/image_grid.h"
#include "model/linear_preparer.h"
#include "model/weights.h"
#include "ops/linear.h"

namespace qvl {

// Receives named intermediate tensors (fixture names such as "vision.embed") for dumps
// and golden tests. Called once per tensor, never per element.
using TensorTap =
    std::function<void(const std::string& name, const float* data, std::vector<int64_t> shape)>;

// A tap that files a video pass's tensors under the reference's video names:
// "vision.X" -> "video.vision.X", "image_embeds" -> "video_embeds", "deepstack.j" ->
// "video_deepstack.j" (the tower itself names what it computes as for images).
TensorTap VideoTensorNames(const TensorTap& tap);

struct VisionOutput {
  int64_t tokens = 0;                         // N/4 merged tokens over all images
  std::vector<float> embeds;                  // [tokens, D] replaces the <|image_pad|> rows
  std::vector<std::vector<float>> deepstack;  // per deepstack merger, [tokens, D]
};

// An encoding in progress. The engine runs it in slices of whole blocks so that other
// requests' decode steps run in between (a large image takes seconds).
class VisionEncoding {
 public:
  bool done() const { return next_block_ < 0; }
  // Blocks run so far, of the tower's depth(); until done().
  int blocks_run() const { return next_block_; }
  // The result, once done().
  VisionOutput& output() { return output_; }

 private:
  friend class VisionTower;
  std::vector<GridThw> grids_;
  std::vector<int64_t> segments_;  // attention segments: one per frame
  int64_t n_ = 0;                  // patches
  int next_block_ = 0;             // -1 when finished
  // Scratch, reused where lifetimes allow: `normed_` also holds the position embeddings
  // and the attention output, and `wide_` the qkv projections, then the MLP's hidden
  // layer. Projections back to the residual stream add into `h_` in their stores.
  LargeVector<float> h_, normed_, wide_;
  std::vector<float> cos_, sin_;
  VisionOutput output_;
};

class VisionTower {
 public:
  // `precision` applies to row-major (f32 / bf16) weights; `prepare` makes each weight.
  // Attention runs in int8 (SageAttention style) when the blocks' weights are quantized
  // (q8 / q4), in bf16 at bf16 precision and in f32 otherwise.
  VisionTower(const VisionConfig& config, const VisionWeights& weights, MatmulPrecision precision,
              const LinearPreparer& prepare);

  // pixel_values [sum of patches, C*T*P*P] in the patch order of the image processor.
  VisionOutput Encode(const float* pixel_values, std::span<const GridThw> grids, ThreadPool& pool,
                      const TensorTap* tap = nullptr) const;

  // The same in slices: Begin embeds the patches, each Step runs up to `max_blocks`
  // blocks and, after the last, the mergers.
  void Begin(const float* pixel_values, std::span<const GridThw> grids, ThreadPool& pool,
             VisionEncoding* enc, const TensorTap* tap = nullptr) const;
  void Step(VisionEncoding* enc, int max_blocks, ThreadPool& pool,
            const TensorTap* tap = nullptr) const;
  int depth() const { return static_cast<int>(blocks_.size()); }

  const VisionConfig& config() const { return config_; }

 private:
  struct Block {
    const VisionBlockWeights* w;
    LinearWeight qkv, proj, fc1, fc2;
  };
  struct Merger {
    const MergerWeights* w;
    LinearWeight fc1, fc2;
  };

  void RunBlock(const Block& blk, VisionEncoding* enc, ThreadPool& pool) const;
  // h [N, Dv] -> [N/4, D]; `norm_before_merge` selects the main merger's per-patch norm.
  void RunMerger(const Merger& m, VisionEncoding* enc, bool norm_before_merge, ThreadPool& pool,
                 std::vector<float>* out) const;

  VisionConfig config_;
  const VisionWeights* weights_;
  MatmulPrecision precision_;
  DType attention_dtype_;
  LinearWeight patch_embed_;
  std::vector<Block> blocks_;
  Merger merger_;
  std::vector<Merger> deepstack_;
};

// The weight format for `view` when `requested` is asked for: packed formats as
// requested; otherwise the checkpoint's matrix in place where the precision allows
// (bf16 checkpoints stay bf16 either way; f32 ones stay f32 unless the precision is bf16).
WeightFormat FormatFor(const WeightView& view, MatmulPrecision precision, WeightFormat requested);

}  // namespace qvl
