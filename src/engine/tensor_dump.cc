#include "engine/tensor_dump.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "base/thread_pool.h"
#include "model/single_sequence.h"
#include "model/visual_features.h"

namespace qvl {
namespace {

TensorData MakeTensor(const std::string& name, DType dtype, std::vector<int64_t> shape,
                      const void* data) {
  TensorData t;
  t.spec.name = name;
  t.spec.dtype = dtype;
  t.spec.shape = std::move(shape);
  const size_t n = t.spec.nbytes();
  t.bytes.resize(n);
  std::memcpy(t.bytes.data(), data, n);
  return t;
}

TensorData I64Tensor(const std::string& name, std::vector<int64_t> shape,
                     const std::vector<int64_t>& values) {
  return MakeTensor(name, DType::kI64, std::move(shape), values.data());
}

}  // namespace

std::vector<TensorData> DumpRequest(Qwen3VLModel& model, const RequestPreparer& preparer,
                                    const GenerationRequest& request, const DumpOptions& options) {
  const PreparedRequest prepared = preparer.Prepare(request, /*fallback_seed=*/0);
  const ModelConfig& cfg = model.config();
  ThreadPool pool(options.threads, /*pin=*/false);
  std::vector<TensorData> out;
  TensorTap tap = [&](const std::string& name, const float* data, std::vector<int64_t> shape) {
    out.push_back(MakeTensor(name, DType::kF32, std::move(shape), data));
  };

  const int64_t n = static_cast<int64_t>(prepared.prompt.size());
  out.push_back(I64Tensor("input_ids", {n}, {prepared.prompt.begin(), prepared.prompt.end()}));
  std::vector<int64_t> positions;
  for (int r = 0; r < 3; ++r) {
    positions.insert(positions.end(), prepared.positions.row(r).begin(),
                     prepared.positions.row(r).end());
  }
  out.push_back(I64Tensor("position_ids", {3, n}, positions));

  // Vision: all images in one pass and all videos in another, as the reference batches
  // them; then their features in the order of their pad tokens.
  VisionOutput vision, video_vision;
  auto encode = [&](bool videos, VisionOutput* result) {
    std::vector<float> pixels;
    std::vector<GridThw> grids;
    std::vector<int64_t> thw;
    for (const PreparedImage& img : prepared.images) {
      if ((img.info.frames > 0) != videos) continue;
      pixels.insert(pixels.end(), img.pixels.begin(), img.pixels.end());
      grids.push_back(img.grid);
      thw.insert(thw.end(), {img.grid.t, img.grid.h, img.grid.w});
    }
    if (grids.empty()) return;
    const int64_t patches =
        std::accumulate(grids.begin(), grids.end(), int64_t{0},
                        [](int64_t s, const GridThw& g) { return s + g.patches(); });
    out.push_back(MakeTensor(videos ? "pixel_values_videos" : "pixel_values", DType::kF32,
                             {patches, static_cast<int64_t>(pixels.size()) / patches},
                             pixels.data()));
    out.push_back(I64Tensor(videos ? "video_grid_thw" : "image_grid_thw",
                            {static_cast<int64_t>(grids.size()), 3}, thw));
    const TensorTap video_tap = VideoTensorNames(tap);
    *result = model.vision().Encode(pixels.data(), grids, pool, videos ? &video_tap : &tap);
  };
  encode(false, &vision);
  encode(true, &video_vision);
  VisualFeatures features;
  int64_t image_row = 0, video_row = 0;
  for (const int32_t id : prepared.prompt) {
    if (id == cfg.image_token_id) {
      AppendVisualFeatureRows(&vision, image_row++, 1, cfg.text.hidden_size,
                              vision.deepstack.size(), &features);
    } else if (id == cfg.video_token_id) {
      AppendVisualFeatureRows(&video_vision, video_row++, 1, cfg.text.hidden_size,
                              video_vision.deepstack.size(), &features);
    }
  }

  // Prefill, then greedy decode through the cache.
  const int64_t steps = options.tokens;
  SingleSequence sequence(model.text(), model.options().kv_dtype, n + steps, pool);
  const int64_t vocab = cfg.text.vocab_size;
  std::vector<float> logits(vocab);
  sequence.Prefill(prepared.prompt, prepared.positions,
                   features.embeds.empty() ? nullptr : &features, logits.data(), &tap);

  const int k = options.top_k;
  std::vector<int64_t> greedy, topk_ids;
  std::vector<float> topk_logits;
  std::vector<int64_t> order(vocab);
  for (int64_t step = 0; step < steps; ++step) {
    if (step > 0) {
      const int32_t fed = step - 1 < static_cast<int64_t>(options.forced.size())
                              ? options.forced[step - 1]
                              : static_cast<int32_t>(greedy[step - 1]);
      sequence.Step(fed, logits.data());
    }
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
    greedy.push_back(order[0]);
    for (int j = 0; j < k; ++j) {
      topk_ids.push_back(order[j]);
      topk_logits.push_back(logits[order[j]]);
    }
  }
  out.push_back(I64Tensor("greedy_tokens", {steps}, greedy));
  out.push_back(I64Tensor("decode.topk_ids", {steps, k}, topk_ids));
  out.push_back(MakeTensor("decode.topk_logits", DType::kF32, {steps, k}, topk_logits.data()));
  return out;
}

}  // namespace qvl
