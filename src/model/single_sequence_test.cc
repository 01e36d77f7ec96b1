#include "model/single_sequence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"
#include "model/qwen3vl.h"

namespace qvl {
namespace {

const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";

// A step after a prefill sees what one prefill of the whole sequence sees.
TEST(SingleSequence, StepsContinueThePrefill) {
  ModelOptions options;
  options.precision = MatmulPrecision::kF32;
  options.text_weights = WeightFormat::kBF16;
  options.vision_weights = WeightFormat::kBF16;
  options.weight_cache_dir = "none";
  options.kv_dtype = DType::kF32;
  auto model = Qwen3VLModel::Load(kModelDir, options);
  ThreadPool pool(2, /*pin=*/false);
  const int image_token = model->config().image_token_id;
  const std::vector<int32_t> ids = {151644, 872, 198, 9707, 11, 1879, 0, 151645};
  const std::vector<int32_t> head(ids.begin(), ids.end() - 2);
  const int64_t vocab = model->config().text.vocab_size;

  std::vector<float> whole(vocab), stepped(vocab);
  SingleSequence all(model->text(), DType::kF32, static_cast<int64_t>(ids.size()), pool);
  all.Prefill(ids, ComputeMropePositions(ids, image_token, {}, 2), nullptr, whole.data());

  SingleSequence parts(model->text(), DType::kF32, static_cast<int64_t>(ids.size()), pool);
  parts.Prefill(head, ComputeMropePositions(head, image_token, {}, 2), nullptr, stepped.data());
  parts.Step(ids[ids.size() - 2], stepped.data());
  parts.Step(ids.back(), stepped.data());
  EXPECT_EQ(parts.length(), static_cast<int64_t>(ids.size()));
  float worst = 0;
  for (int64_t i = 0; i < vocab; ++i) worst = std::max(worst, std::fabs(whole[i] - stepped[i]));
  EXPECT_LE(worst, 1e-4f);
  EXPECT_EQ(Argmax(whole), Argmax(stepped));

  try {
    parts.Step(0, stepped.data());
    FAIL() << "a step beyond the capacity must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
  }
}

TEST(SingleSequence, ArgmaxTakesTheFirstOfTies) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(Argmax(logits), 1);
}

}  // namespace
}  // namespace qvl
