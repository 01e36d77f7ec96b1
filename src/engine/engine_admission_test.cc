// What the engine admits and counts on the tiny fixture model: --queue counts only
// requests beyond the free slots and a request's list of inputs once, a long image encode
// stops for a cancellation, a request with n answers counts once in the statistics, and
// a KV cache smaller than the context is reported when the engine starts.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/log.h"
#include "engine/engine_test_cases.h"

namespace qvl {
namespace {

GenerationRequest Endless(const std::string& name) {
  GenerationRequest r = LoadCase(name);
  r.ignore_eos = true;
  r.max_tokens = 16000;
  return r;
}

TEST(EngineAdmission, QueueCountsOnlyRequestsBeyondTheFreeSlots) {
  EngineOptions options;
  options.max_sequences = 2;
  options.max_queue = 0;  // no request may wait
  auto engine = MakeEngine(options);
  Collector a, b, c;
  // Two requests take the two slots, whether or not the engine thread has seen the
  // first when the second comes.
  const RequestId first = engine->Submit(Endless("01_text_only"), a.Sink());
  const RequestId second = engine->Submit(Endless("01_text_only"), b.Sink());
  try {
    engine->Submit(LoadCase("01_text_only"), c.Sink());
    ADD_FAILURE() << "a third request was accepted with both slots taken and --queue 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_STREQ(e.what(), "the server is busy: 0 requests are already waiting; retry later");
  }
  engine->Cancel(first);
  engine->Cancel(second);
  a.Wait();
  b.Wait();
  // Both slots are free again: a request runs.
  engine->Submit(LoadCase("01_text_only"), c.Sink());
  c.Wait();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kLength);
}

TEST(EngineAdmission, TheInputsOfOneRequestAreAdmittedAsOne) {
  EngineOptions options;
  options.max_sequences = 1;
  options.max_queue = 0;
  auto engine = MakeEngine(options);
  // Four inputs of one request: one slot, and three wait though --queue is 0.
  std::vector<Collector> inputs(4);
  std::vector<GenerationRequest> requests;
  std::vector<UpdateSink> sinks;
  for (Collector& c : inputs) {
    requests.push_back(Endless("01_text_only"));
    sinks.push_back(c.Sink());
  }
  const std::vector<RequestId> ids = engine->SubmitAll(std::move(requests), std::move(sinks));
  ASSERT_EQ(ids.size(), 4u);
  // They wait as any request does: the next one is refused.
  Collector other;
  try {
    engine->Submit(LoadCase("01_text_only"), other.Sink());
    ADD_FAILURE() << "a request was accepted behind a list of inputs with --queue 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("the server is busy: "), std::string::npos) << e.what();
  }
  for (const RequestId id : ids) engine->Cancel(id);
  for (Collector& c : inputs) {
    c.Wait();
    EXPECT_EQ(c.last.finish_reason, FinishReason::kCancelled);
  }
  // With the slot free, a list of inputs runs to the end, each its own answer.
  std::vector<Collector> short_inputs(3);
  requests.clear();
  sinks.clear();
  for (Collector& c : short_inputs) {
    requests.push_back(LoadCase("01_text_only"));
    sinks.push_back(c.Sink());
  }
  engine->SubmitAll(std::move(requests), std::move(sinks));
  for (Collector& c : short_inputs) {
    c.Wait();
    EXPECT_EQ(c.last.finish_reason, FinishReason::kLength);
    EXPECT_EQ(c.last.usage.completion_tokens, 16);
  }
}

TEST(EngineAdmission, CancellingDuringAnImageEncodeStopsIt) {
  auto engine = MakeEngine();
  // The fixture photo at 4096 image tokens: four vision blocks over 16,384 patches.
  GenerationRequest r = LoadCase("02_one_image_jpeg");
  r.image_budget.min_pixels = 4096 * 32 * 32;
  r.image_budget.max_pixels = r.image_budget.min_pixels;
  Collector c;
  const auto submitted = std::chrono::steady_clock::now();
  const RequestId id = engine->Submit(std::move(r), c.Sink());
  while (engine->Stats().active == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  engine->Cancel(id);
  c.Wait();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kCancelled);
  // The encode stopped at a block's end instead of finishing the image for no one.
  EXPECT_EQ(engine->Stats().images_encoded, 0) << "after " << waited << " s";
}

TEST(EngineAdmission, ARequestWithNAnswersCountsOnceWithItsPromptOnce) {
  auto engine = MakeEngine();
  GenerationRequest r = LoadCase("01_text_only");
  r.n = 3;
  ChoicesCollector c(3);
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  const EngineStats s = engine->Stats();
  EXPECT_EQ(s.requests_finished, 1);
  EXPECT_EQ(s.prompt_tokens, c.last[0].usage.prompt_tokens);
  EXPECT_EQ(s.completion_tokens, c.last[0].usage.completion_tokens +
                                     c.last[1].usage.completion_tokens +
                                     c.last[2].usage.completion_tokens);
}

TEST(EngineAdmission, WarnsWhenTheKvCacheHoldsLessThanTheContext) {
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  EngineOptions options;
  options.context_tokens = 4096;
  options.kv_page_tokens = 16;
  options.kv_cache_bytes = 64 << 10;  // two of the tiny model's 32 KiB pages: 32 tokens
  MakeEngine(options);
  options.kv_cache_bytes = size_t{256} << 20;
  MakeEngine(options);
  SetLogSink({});
  int warnings = 0;
  for (const std::string& line : lines) {
    if (line.find("the KV cache holds 32 tokens, fewer than the context of 4096") !=
        std::string::npos) {
      ++warnings;
      EXPECT_NE(line.find("raise --kv-cache-mb or lower --ctx-size (or --kv-cache-type q8: "
                          "1.78 times the tokens)"),
                std::string::npos)
          << line;
    }
  }
  EXPECT_EQ(warnings, 1);
}

}  // namespace
}  // namespace qvl
