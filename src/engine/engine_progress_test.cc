// Progress before the first token (GenerationRequest::report_progress) on the tiny fixture
// model: the image's encoding, then the prompt's reading, in order and complete, and the
// answer the same as without it.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_test_cases.h"

namespace qvl {
namespace {

struct Heard {
  std::mutex mu;
  std::vector<PromptProgress> progress;
  bool text_before_progress = false;
  bool text_seen = false;
};

UpdateSink Listen(Heard* heard, Collector* c) {
  return [heard, sink = c->Sink()](GenerationUpdate&& u) mutable {
    {
      std::lock_guard<std::mutex> lock(heard->mu);
      if (u.progress) {
        EXPECT_TRUE(u.text.empty() && u.tokens.empty() && !u.finished);
        heard->text_before_progress |= heard->text_seen;
        heard->progress.push_back(*u.progress);
      } else if (!u.tokens.empty()) {
        heard->text_seen = true;
      }
    }
    sink(std::move(u));
  };
}

TEST(EngineProgress, TellsOfTheImageThenThePromptBeforeTheFirstToken) {
  EngineOptions options;
  options.prefill_chunk_tokens = 16;  // the prompt read in several steps
  const GenerationRequest plain = LoadCase("02_one_image_jpeg");

  Collector without;
  Heard none;
  auto first = MakeEngine(options);
  first->Submit(GenerationRequest(plain), Listen(&none, &without));
  without.Wait();
  ASSERT_TRUE(without.last.finish_reason == FinishReason::kStop ||
              without.last.finish_reason == FinishReason::kLength)
      << without.last.error;
  EXPECT_TRUE(none.progress.empty()) << "only a request that asks hears of its progress";

  GenerationRequest asked = plain;
  asked.report_progress = true;
  Collector with;
  Heard heard;
  auto second = MakeEngine(options);
  second->Submit(std::move(asked), Listen(&heard, &with));
  with.Wait();
  EXPECT_EQ(with.last.finish_reason, without.last.finish_reason) << with.last.error;
  EXPECT_EQ(with.tokens, without.tokens);
  EXPECT_FALSE(heard.text_before_progress);

  const std::vector<PromptProgress>& p = heard.progress;
  ASSERT_GE(p.size(), 3u);
  const int64_t total = with.last.usage.prompt_tokens;
  EXPECT_EQ(p.front().vision, 0.0) << "the image is still to encode";
  EXPECT_EQ(p.front().processed, 0);
  bool vision_rose = false, prompt_rose = false;
  for (size_t i = 0; i < p.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(p[i].total, total);
    EXPECT_EQ(p[i].cached, 0);
    EXPECT_GE(p[i].elapsed_ms, 0);
    EXPECT_LT(p[i].processed, total) << "the last chunk gives the first token instead";
    if (i == 0) continue;
    EXPECT_GE(p[i].vision, p[i - 1].vision);
    EXPECT_GE(p[i].processed, p[i - 1].processed);
    EXPECT_GE(p[i].elapsed_ms, p[i - 1].elapsed_ms);
    vision_rose |= p[i].vision > p[i - 1].vision && p[i].vision < 1;
    prompt_rose |= p[i].processed > p[i - 1].processed;
    // The prompt is read once its image is encoded.
    if (p[i].processed > 0) {
      EXPECT_EQ(p[i].vision, 1.0);
    }
  }
  EXPECT_TRUE(vision_rose) << "a report between the vision blocks";
  EXPECT_TRUE(prompt_rose) << "a report between the prompt chunks";
}

}  // namespace
}  // namespace qvl
