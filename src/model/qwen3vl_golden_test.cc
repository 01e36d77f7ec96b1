// The whole model against the reference's golden tensors for every fixture case: vision
// stages (images and videos), M-RoPE positions, every decoder layer, logits, greedy tokens, and
// teacher-forced decode steps through the paged KV cache, in f32 and in bf16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "golden_tensors.h"
#include "model/mrope.h"
#include "model/qwen3vl.h"
#include "model/single_sequence.h"
#include "model/visual_features.h"

namespace qvl {
namespace {

const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";
const std::string kCasesDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kCasesDir))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

float MaxAbsDiff(const float* a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

double Cosine(const float* a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

float MaxAbs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

struct Tolerances {
  float hidden;      // vision stages and decoder layers, max abs ...
  float hidden_rel;  // ... or this fraction of the largest golden value, whichever is larger
  float features;    // image_embeds / deepstack, max abs
  float logits;      // logits max abs
  double cosine;     // logits cosine
};

// Runs one fixture case through the model and compares with the goldens.
void CheckCase(const std::string& name, MatmulPrecision precision, const Tolerances& tol) {
  SCOPED_TRACE(name);
  ModelOptions options;
  options.precision = precision;
  options.text_weights = options.vision_weights = WeightFormat::kBF16;  // checkpoint layout
  options.weight_cache_dir = "none";
  options.kv_dtype = precision == MatmulPrecision::kF32 ? DType::kF32 : DType::kBF16;
  auto model = Qwen3VLModel::Load(kModelDir, options);
  const ModelConfig& cfg = model->config();
  ThreadPool pool(2, /*pin=*/false);
  const GoldenTensors golden(kCasesDir + "/" + name);

  std::map<std::string, std::vector<float>> seen;
  TensorTap tap = [&](const std::string& n, const float* data, std::vector<int64_t> shape) {
    const int64_t count =
        std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    seen[n].assign(data, data + count);
  };

  // Vision tower on the reference's pixel values (qvl's, where the case holds their digest).
  std::vector<GridThw> grids;
  VisionOutput vis;
  if (golden.Has("pixel_values")) {
    const auto g = golden.I64("image_grid_thw");
    for (size_t i = 0; i < g.size(); i += 3) grids.push_back({g[i], g[i + 1], g[i + 2]});
    const auto pixels = golden.F32("pixel_values");
    vis = model->vision().Encode(pixels.data(), grids, pool, &tap);
    for (const char* stage : {"vision.pos_embed", "vision.embed", "vision.last_hidden"}) {
      const auto want = golden.F32(stage);
      ASSERT_EQ(seen[stage].size(), want.size()) << stage;
      EXPECT_LE(MaxAbsDiff(seen[stage].data(), want),
                std::max(tol.hidden, tol.hidden_rel * MaxAbs(want)))
          << stage;
    }
    EXPECT_LE(MaxAbsDiff(vis.embeds.data(), golden.F32("image_embeds")), tol.features);
    for (size_t j = 0; j < vis.deepstack.size(); ++j) {
      const std::string n = "deepstack." + std::to_string(j);
      EXPECT_LE(MaxAbsDiff(vis.deepstack[j].data(), golden.F32(n)), tol.features) << n;
    }
  }

  // Vision tower on the golden video patches: a separate pass, as in the reference.
  std::vector<GridThw> video_grids;
  VisionOutput video;
  if (golden.Has("pixel_values_videos")) {
    const auto g = golden.I64("video_grid_thw");
    for (size_t i = 0; i < g.size(); i += 3) video_grids.push_back({g[i], g[i + 1], g[i + 2]});
    const auto pixels = golden.F32("pixel_values_videos");
    const TensorTap video_tap = VideoTensorNames(tap);
    video = model->vision().Encode(pixels.data(), video_grids, pool, &video_tap);
    for (const char* stage :
         {"video.vision.pos_embed", "video.vision.embed", "video.vision.last_hidden"}) {
      const auto want = golden.F32(stage);
      ASSERT_EQ(seen[stage].size(), want.size()) << stage;
      EXPECT_LE(MaxAbsDiff(seen[stage].data(), want),
                std::max(tol.hidden, tol.hidden_rel * MaxAbs(want)))
          << stage;
    }
    EXPECT_LE(MaxAbsDiff(video.embeds.data(), golden.F32("video_embeds")), tol.features);
    ASSERT_EQ(seen["video_embeds"].size(), golden.F32("video_embeds").size());
    for (size_t j = 0; j < video.deepstack.size(); ++j) {
      const std::string n = "video_deepstack." + std::to_string(j);
      EXPECT_LE(MaxAbsDiff(video.deepstack[j].data(), golden.F32(n)), tol.features) << n;
    }
  }

  // Positions.
  const auto ids64 = golden.I64("input_ids");
  const std::vector<int32_t> ids(ids64.begin(), ids64.end());
  const int64_t L = static_cast<int64_t>(ids.size());
  const MropePositions pos =
      ComputeMropePositions(ids, cfg.image_token_id, grids, cfg.vision.spatial_merge_size,
                            cfg.video_token_id, video_grids);
  const auto want_pos = golden.I64("position_ids");
  for (int r = 0; r < 3; ++r)
    for (int64_t i = 0; i < L; ++i)
      ASSERT_EQ(pos.row(r)[i], want_pos[r * L + i]) << "row " << r << " token " << i;

  // Prefill.
  const auto greedy = golden.I64("greedy_tokens");
  SingleSequence sequence(model->text(), options.kv_dtype, L + static_cast<int64_t>(greedy.size()),
                          pool);
  // Image and video features in the order of their pad tokens (README 7.7).
  VisualFeatures features;
  int64_t image_row = 0, video_row = 0;
  for (const int32_t id : ids) {
    if (id == cfg.image_token_id) {
      AppendVisualFeatureRows(&vis, image_row++, 1, cfg.text.hidden_size, vis.deepstack.size(),
                              &features);
    } else if (id == cfg.video_token_id) {
      AppendVisualFeatureRows(&video, video_row++, 1, cfg.text.hidden_size, video.deepstack.size(),
                              &features);
    }
  }
  EXPECT_EQ(image_row, vis.tokens);
  EXPECT_EQ(video_row, video.tokens);
  const int64_t vocab = cfg.text.vocab_size;
  std::vector<float> logits(vocab);
  sequence.Prefill(ids, pos, features.embeds.empty() ? nullptr : &features, logits.data(), &tap);
  for (int l = 0; l < cfg.text.num_layers; ++l) {
    const std::string n = "text.layer_out." + std::to_string(l);
    const auto want = golden.F32(n);
    EXPECT_LE(MaxAbsDiff(seen[n].data(), want), std::max(tol.hidden, tol.hidden_rel * MaxAbs(want)))
        << n;
  }
  EXPECT_LE(MaxAbsDiff(seen["text.final_norm_last"].data(), golden.F32("text.final_norm_last")),
            tol.hidden);
  const auto want_logits = golden.F32("logits_last");
  EXPECT_LE(MaxAbsDiff(logits.data(), want_logits), tol.logits);
  EXPECT_GE(Cosine(logits.data(), want_logits), tol.cosine);

  // Decode, teacher-forced on the golden tokens: each step's logits against the golden
  // top-20, and (in f32) greedy agreement at every step.
  const auto topk_ids = golden.I64("decode.topk_ids");
  const auto topk_logits = golden.F32("decode.topk_logits");
  const int k = 20;
  for (size_t step = 0; step < greedy.size(); ++step) {
    if (step > 0) sequence.Step(static_cast<int32_t>(greedy[step - 1]), logits.data());
    float worst = 0;
    for (int j = 0; j < k; ++j) {
      worst =
          std::max(worst, std::fabs(logits[topk_ids[step * k + j]] - topk_logits[step * k + j]));
    }
    EXPECT_LE(worst, tol.logits) << "decode step " << step;
    const float margin = topk_logits[step * k] - topk_logits[step * k + 1];
    if (precision == MatmulPrecision::kF32 || margin > 0.2f) {
      EXPECT_EQ(Argmax(logits), greedy[step]) << "decode step " << step;
    } else {
      // Small golden margins: the golden token must be among the engine's top 5.
      std::vector<int64_t> order(vocab);
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                        [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
      EXPECT_NE(std::find(order.begin(), order.begin() + 5, greedy[step]), order.begin() + 5)
          << "decode step " << step;
    }
  }
}

class GoldenCase : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCase, F32MatchesReference) {
  CheckCase(GetParam(), MatmulPrecision::kF32, {1e-3f, 0.0f, 1e-3f, 1e-3f, 0.99999});
}

TEST_P(GoldenCase, Bf16WithinRecommendedTolerance) {
  CheckCase(GetParam(), MatmulPrecision::kBF16, {0.05f, 0.02f, 0.05f, 0.1f, 0.9995});
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenCase, ::testing::ValuesIn(CaseNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace qvl
