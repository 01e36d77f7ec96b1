// The engine end to end on the tiny fixture model: greedy answers equal the reference's,
// alone and in a batch of concurrent requests; cached prefixes are reused; cancellation,
// KV-cache pressure and bad input behave.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/field_error.h"
#include "engine/engine_test_cases.h"
#include "engine/request_preparer.h"

namespace qvl {
namespace {

TEST(Engine, GreedyTokensMatchReferenceForEveryCase) {
  auto engine = MakeEngine();
  for (const std::string& name : CaseNames()) {
    SCOPED_TRACE(name);
    GenerationRequest r = LoadCase(name);
    r.ignore_eos = true;
    r.top_logprobs = 0;
    Collector c;
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    EXPECT_EQ(c.last.finish_reason, FinishReason::kLength);
    EXPECT_EQ(c.tokens, GoldenTokens(name));
    const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
    EXPECT_EQ(c.last.usage.prompt_tokens, meta["num_prompt_tokens"].get<int64_t>());
    EXPECT_EQ(c.last.usage.completion_tokens, 16);
  }
}

TEST(Engine, ARawPromptIsTextTokenizedAsIsOrTokenIdsWithoutTheChatTemplate) {
  auto engine = MakeEngine();
  const GenerationRequest chat = LoadCase("01_text_only");
  GenerationRequest raw;
  raw.prompt_text = RenderChatTemplate(chat.messages, /*add_generation_prompt=*/true);
  raw.sampling.temperature = 0.0f;
  raw.max_tokens = 16;
  raw.ignore_eos = true;
  raw.top_logprobs = 0;  // so that updates carry the token ids
  Collector c;
  engine->Submit(std::move(raw), c.Sink());
  c.Wait();
  EXPECT_EQ(c.tokens, GoldenTokens("01_text_only"));
  const nlohmann::json meta = ReadJson(kCasesDir + "/01_text_only/meta.json");
  EXPECT_EQ(c.last.usage.prompt_tokens, meta["num_prompt_tokens"].get<int64_t>());

  GenerationRequest plain;
  plain.prompt_text = "The capital of France is";
  plain.max_tokens = 2;
  Collector d;
  engine->Submit(std::move(plain), d.Sink());
  d.Wait();
  EXPECT_EQ(d.last.usage.prompt_tokens, 5);  // "The", " capital", " of", " France", " is"

  GenerationRequest ids;
  for (int64_t id : meta["input_ids"]) ids.prompt_tokens.push_back(static_cast<int32_t>(id));
  ids.sampling.temperature = 0.0f;
  ids.max_tokens = 16;
  ids.ignore_eos = true;
  ids.top_logprobs = 0;
  Collector e;
  engine->Submit(std::move(ids), e.Sink());
  e.Wait();
  EXPECT_EQ(e.tokens, GoldenTokens("01_text_only"));

  for (const int32_t bad : {151669, -1, 151655}) {
    GenerationRequest wrong;
    wrong.prompt_tokens = {151644, bad};
    try {
      engine->Submit(std::move(wrong), d.Sink());
      FAIL() << bad;
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "prompt[1]");
      EXPECT_EQ(std::string(e.what()),
                bad == 151655 ? "prompt[1]: token id 151655 is the image placeholder, which needs "
                                "an image"
                              : "prompt[1]: token id " + std::to_string(bad) +
                                    " is not in the vocabulary (0 to 151668)");
    }
  }

  GenerationRequest empty;
  empty.prompt_text = "";
  try {
    engine->Submit(std::move(empty), d.Sink());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "prompt: must not be empty");
  }
}

TEST(Engine, StopsAtEndOfSequenceWithReferenceText) {
  auto engine = MakeEngine();
  for (const std::string& name : CaseNames()) {
    SCOPED_TRACE(name);
    const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
    Collector c;
    engine->Submit(LoadCase(name), c.Sink());
    c.Wait();
    EXPECT_EQ(c.text, meta["greedy_text"].get<std::string>());
    const bool stops_early = !meta["greedy_first_eos_index"].is_null();
    EXPECT_EQ(c.last.finish_reason, stops_early ? FinishReason::kStop : FinishReason::kLength);
    EXPECT_EQ(c.last.stop, "");
    EXPECT_EQ(c.last.stop_token, std::nullopt);
  }
}

// A stop string cut from the reference's answer ends it there, and the final update names
// the one that matched (Anthropic's stop_sequence).
TEST(Engine, NamesTheStopStringThatEndedTheAnswer) {
  auto engine = MakeEngine();
  const std::string name = CaseNames().front();
  const std::string greedy =
      ReadJson(kCasesDir + "/" + name + "/meta.json")["greedy_text"].get<std::string>();
  ASSERT_GE(greedy.size(), 8u);
  const std::string stop = greedy.substr(4, 3);
  GenerationRequest r = LoadCase(name);
  r.stop = {"\x01never", stop};
  Collector c;
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  EXPECT_EQ(c.text, greedy.substr(0, greedy.find(stop)));
  EXPECT_EQ(c.last.finish_reason, FinishReason::kStop);
  EXPECT_EQ(c.last.stop, stop);
  EXPECT_EQ(c.last.stop_token, std::nullopt);
}

// A stop token id taken from the reference's answer ends it there, and the final update
// names it (vLLM's stop_reason).
TEST(Engine, NamesTheStopTokenIdThatEndedTheAnswer) {
  auto engine = MakeEngine();
  const std::string name = CaseNames().front();
  const std::vector<int32_t> golden = GoldenTokens(name);
  ASSERT_GE(golden.size(), 3u);
  GenerationRequest r = LoadCase(name);
  r.stop_token_ids = {golden[2]};
  Collector c;
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kStop);
  EXPECT_EQ(c.last.usage.completion_tokens, 3);
  EXPECT_EQ(c.last.stop, "");
  EXPECT_EQ(c.last.stop_token, golden[2]);
}

TEST(Engine, ConcurrentRequestsGiveTheSameAnswersAsAlone) {
  EngineOptions options;
  options.max_sequences = 8;
  options.prefill_chunk_tokens = 48;  // several chunks per prompt, mixed with decodes
  auto engine = MakeEngine(options);
  const std::vector<std::string> names = CaseNames();
  std::vector<std::unique_ptr<Collector>> collectors;
  for (int round = 0; round < 2; ++round) {
    for (const std::string& name : names) {
      GenerationRequest r = LoadCase(name);
      r.ignore_eos = true;
      r.top_logprobs = 0;
      collectors.push_back(std::make_unique<Collector>());
      engine->Submit(std::move(r), collectors.back()->Sink());
    }
  }
  for (size_t i = 0; i < collectors.size(); ++i) {
    collectors[i]->Wait();
    EXPECT_EQ(collectors[i]->tokens, GoldenTokens(names[i % names.size()]))
        << names[i % names.size()];
  }
  const EngineStats stats = engine->Stats();
  EXPECT_EQ(stats.requests_finished, static_cast<int64_t>(collectors.size()));
  EXPECT_GT(stats.image_cache_hits + stats.cached_prompt_tokens, 0);
}

// An int8 KV cache (--kv-cache-type q8) keeps batch invariance: every case gives the same
// tokens in a batch of concurrent requests, prefilled in chunks beside decodes and
// reusing cached prefixes, as alone, one after the other.
TEST(Engine, AnInt8KvCacheAnswersTheSameInABatchAsAlone) {
  const std::vector<std::string> names = CaseNames();
  auto ask = [](const std::string& name) {
    GenerationRequest r = LoadCase(name);
    r.ignore_eos = true;
    r.top_logprobs = 0;
    return r;
  };
  std::vector<std::vector<int32_t>> alone;
  {
    auto engine = MakeEngine(EngineOptions(), DType::kI8);
    for (const std::string& name : names) {
      Collector c;
      engine->Submit(ask(name), c.Sink());
      c.Wait();
      alone.push_back(c.tokens);
    }
  }
  EngineOptions options;
  options.max_sequences = 8;
  options.prefill_chunk_tokens = 48;
  auto engine = MakeEngine(options, DType::kI8);
  std::vector<std::unique_ptr<Collector>> collectors;
  for (int round = 0; round < 2; ++round) {
    for (const std::string& name : names) {
      collectors.push_back(std::make_unique<Collector>());
      engine->Submit(ask(name), collectors.back()->Sink());
    }
  }
  for (size_t i = 0; i < collectors.size(); ++i) {
    collectors[i]->Wait();
    EXPECT_EQ(collectors[i]->tokens, alone[i % names.size()]) << names[i % names.size()];
  }
  EXPECT_GT(engine->Stats().cached_prompt_tokens, 0);
}

// How many tokens a long text answer streams while a newcomer's image is encoded and
// its prompt prefilled, up to the newcomer's first token; both answers must still be
// the reference's. Submit prepares the newcomer (decodes its image) on the caller's
// thread while the engine streams on, as long as the host lets that take: counted from
// before Submit the tokens are at least those of the newcomer's steps, counted from its
// return at most.
struct Alongside {
  int64_t streamed = 0;         // the long answer's tokens from before Submit
  int64_t streamed_queued = 0;  // the same from Submit's return
  int64_t newcomer_prompt = 0;  // the newcomer's prompt tokens
};

Alongside StreamAlongsideAnImage(double max_stall_seconds) {
  EngineOptions options;
  options.max_stall_seconds = max_stall_seconds;
  auto engine = MakeEngine(options);
  GenerationRequest long_answer = LoadCase("01_text_only");
  long_answer.ignore_eos = true;
  long_answer.max_tokens = 400;
  long_answer.top_logprobs = 0;  // so that updates carry token ids
  Collector a;
  engine->Submit(std::move(long_answer), a.Sink());
  auto streamed = [&a] {
    std::lock_guard<std::mutex> lock(a.mu);
    return a.done ? int64_t{-1} : static_cast<int64_t>(a.tokens.size());
  };
  while (streamed() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  GenerationRequest newcomer = LoadCase("02_one_image_jpeg");
  newcomer.ignore_eos = true;
  newcomer.top_logprobs = 0;
  Collector b;
  std::atomic<int64_t> at_first_token{-1};
  const UpdateSink collect = b.Sink();
  const int64_t at_submit = streamed();
  engine->Submit(std::move(newcomer), [&](GenerationUpdate&& u) {
    if (!u.tokens.empty() && at_first_token.load() < 0) at_first_token = streamed();
    collect(std::move(u));
  });
  const int64_t at_queued = streamed();
  b.Wait();
  a.Wait();
  std::vector<int32_t> head = a.tokens;
  head.resize(GoldenTokens("01_text_only").size());
  EXPECT_EQ(head, GoldenTokens("01_text_only"));
  EXPECT_EQ(b.tokens, GoldenTokens("02_one_image_jpeg"));
  EXPECT_EQ(a.tokens.size(), 400u);
  return {at_first_token.load() - at_submit, at_first_token.load() - at_queued,
          b.last.usage.prompt_tokens};
}

TEST(Engine, AStreamKeepsGoingWhileAnotherImageIsEncodedAndPrefilled) {
  // No stall allowed: one vision block per step and the smallest prompt chunks (16
  // tokens), each followed by a token of the long answer.
  const Alongside smooth = StreamAlongsideAnImage(0.0);
  const int64_t depth = ReadJson(kModelDir + "/config.json")["vision_config"]["depth"];
  EXPECT_GE(smooth.streamed, depth + (smooth.newcomer_prompt + 15) / 16 - 1);
  // Any stall allowed: the image is encoded in one go and the prompt is one chunk, so the
  // long answer pauses for the newcomer's first token.
  const Alongside eager = StreamAlongsideAnImage(1e9);
  EXPECT_LE(eager.streamed_queued, 3);
}

TEST(Engine, RepeatedConversationReusesCachedPrefixAndImage) {
  auto engine = MakeEngine();
  Collector first, second;
  engine->Submit(LoadCase("04_two_turns"), first.Sink());
  first.Wait();
  EXPECT_EQ(first.last.usage.cached_tokens, 0);
  engine->Submit(LoadCase("04_two_turns"), second.Sink());
  second.Wait();
  EXPECT_GT(second.last.usage.cached_tokens, 0);
  EXPECT_EQ(second.text, first.text);
  EXPECT_EQ(engine->Stats().images_encoded, 1);
  // Each image reports its own decode and encode; the reused one was not encoded again.
  ASSERT_EQ(first.last.timings.images.size(), 1u);
  ASSERT_EQ(second.last.timings.images.size(), 1u);
  EXPECT_GT(first.last.timings.images[0].decode_ms, 0);
  EXPECT_GT(first.last.timings.images[0].encode_ms, 0);
  EXPECT_LE(first.last.timings.images[0].encode_ms, first.last.timings.vision_ms);
  EXPECT_GT(second.last.timings.images[0].decode_ms, 0);
  EXPECT_TRUE(second.last.timings.images[0].cached);
  EXPECT_EQ(second.last.timings.images[0].encode_ms, 0);
}

// An image asked about again behind another prefix (here a system prompt, so nothing of
// it comes from the prefix cache) is neither decoded nor encoded again: its preparation
// is recalled with the engine's encoding, and the answer is the one a fresh engine gives.
TEST(Engine, AnImageAskedAboutAgainIsNeitherDecodedNorEncodedAgain) {
  GenerationRequest other = LoadCase("02_one_image_jpeg");
  ChatMessage system;
  system.role = "system";
  system.parts.push_back({ChatPart::Kind::kText, "Answer in one word."});
  other.messages.insert(other.messages.begin(), system);
  Collector fresh;
  MakeEngine()->Submit(GenerationRequest(other), fresh.Sink());
  fresh.Wait();

  auto engine = MakeEngine();
  Collector first, again;
  engine->Submit(LoadCase("02_one_image_jpeg"), first.Sink());
  first.Wait();
  const PreparedRequest recalled = engine->preparer().Prepare(other, 0);
  ASSERT_EQ(recalled.images.size(), 1u);
  EXPECT_TRUE(recalled.images[0].pixels.empty());
  EXPECT_NE(recalled.images[0].shared_encoding, nullptr);
  engine->Submit(GenerationRequest(other), again.Sink());
  again.Wait();
  ASSERT_NE(again.last.finish_reason, FinishReason::kError) << again.last.error;
  EXPECT_EQ(again.tokens, fresh.tokens);
  EXPECT_EQ(again.last.usage.cached_tokens, 0);
  EXPECT_EQ(again.last.timings.images.at(0).source, ImageSource::kLocalCache);
  EXPECT_EQ(again.last.timings.images.at(0).tokens, first.last.timings.images.at(0).tokens);
  EXPECT_EQ(engine->Stats().images_encoded, 1);

  // Without the encoding there is nothing to recall: the image is decoded as before.
  EngineOptions no_cache;
  no_cache.image_cache_bytes = 0;
  auto forgetful = MakeEngine(no_cache);
  Collector once;
  forgetful->Submit(LoadCase("02_one_image_jpeg"), once.Sink());
  once.Wait();
  EXPECT_FALSE(forgetful->preparer().Prepare(other, 0).images.at(0).pixels.empty());
}

TEST(Engine, TheSameImageAtAnotherBudgetIsNotTakenFromThePrefixCache) {
  // 320x256 -> within 65,536 pixels: fewer, other image tokens for the same bytes.
  GenerationRequest smaller = LoadCase("02_one_image_jpeg");
  smaller.image_budget.max_pixels = 65536;
  Collector alone;
  MakeEngine()->Submit(GenerationRequest(smaller), alone.Sink());
  alone.Wait();
  ASSERT_EQ(alone.last.timings.images.size(), 1u);
  ASSERT_LT(alone.last.timings.images[0].tokens, 80);

  auto engine = MakeEngine();
  Collector full, after;
  engine->Submit(LoadCase("02_one_image_jpeg"), full.Sink());
  full.Wait();
  engine->Submit(std::move(smaller), after.Sink());
  after.Wait();
  // Only the text before the image may come from the cache (whole pages of it: none).
  EXPECT_EQ(after.last.usage.cached_tokens, 0);
  EXPECT_FALSE(after.last.timings.images[0].cached);
  EXPECT_EQ(after.tokens, alone.tokens);
}

TEST(Engine, CancelEndsTheRequestAndFreesItsPages) {
  auto engine = MakeEngine();
  GenerationRequest r = LoadCase("02_one_image_jpeg");
  r.ignore_eos = true;
  r.max_tokens = 16000;
  Collector c;
  const RequestId id = engine->Submit(std::move(r), c.Sink());
  engine->Cancel(id);
  c.Wait();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kCancelled);
  EXPECT_EQ(engine->Stats().requests_cancelled, 1);
  // Everything but what the prefix cache keeps is free again.
  const EngineStats s = engine->Stats();
  EXPECT_LE(s.kv_pages_used, s.prefix_cache_pages);
}

TEST(Engine, IdleHookRunsOnceAfterWorkAndNotWhileIdle) {
  std::atomic<int> calls{0};
  EngineOptions options;
  options.on_idle = [&] { ++calls; };
  auto engine = MakeEngine(options);
  // Nothing has run yet: the hook waits for work.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kIdleHookMs));
  EXPECT_EQ(calls.load(), 0);
  Collector c;
  engine->Submit(LoadCase("01_text_only"), c.Sink());
  c.Wait();
  for (int i = 0; i < 100 && calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kIdleHookMs / 5));
  }
  EXPECT_EQ(calls.load(), 1);
  // Staying idle does not call it again.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kIdleHookMs));
  EXPECT_EQ(calls.load(), 1);
}

TEST(Engine, CancellingAQueuedRequestCountsAndNeverRunsIt) {
  EngineOptions options;
  options.max_sequences = 1;
  auto engine = MakeEngine(options);
  GenerationRequest running = LoadCase("01_text_only");
  running.ignore_eos = true;
  running.max_tokens = 16000;
  Collector a, b;
  const RequestId first = engine->Submit(std::move(running), a.Sink());
  const RequestId queued = engine->Submit(LoadCase("02_one_image_jpeg"), b.Sink());
  engine->Cancel(queued);
  b.Wait();
  EXPECT_EQ(b.last.finish_reason, FinishReason::kCancelled);
  EXPECT_EQ(b.last.usage.completion_tokens, 0);
  engine->Cancel(first);
  a.Wait();
  const EngineStats s = engine->Stats();
  EXPECT_EQ(s.requests_cancelled, 2);
  EXPECT_EQ(s.images_encoded, 0);
  EXPECT_EQ(s.queued, 0);
  EXPECT_EQ(s.active, 0);
}

TEST(Engine, SmallKvCachePreemptsAndStillAnswersCorrectly) {
  EngineOptions options;
  options.kv_page_tokens = 16;
  // The tiny model's page is 4 layers x 2 x 2 heads x 16 tokens x 32 x 4 bytes = 32 KiB;
  // 24 pages hold 384 tokens: enough for any one case, not for six at once.
  options.kv_cache_bytes = 24 * 32 * 1024;
  options.max_sequences = 6;
  auto engine = MakeEngine(options);
  const std::vector<std::string> names = CaseNames();
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const std::string& name : names) {
    GenerationRequest r = LoadCase(name);
    r.ignore_eos = true;
    r.top_logprobs = 0;
    collectors.push_back(std::make_unique<Collector>());
    engine->Submit(std::move(r), collectors.back()->Sink());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    collectors[i]->Wait();
    EXPECT_EQ(collectors[i]->tokens, GoldenTokens(names[i])) << names[i];
  }
}

TEST(Engine, RefusesBadInputBeforeAnyWork) {
  EngineOptions options;
  options.context_tokens = 64;
  auto engine = MakeEngine(options);
  Collector c;
  try {
    engine->Submit(LoadCase("02_one_image_jpeg"), c.Sink());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kContextLength);
    EXPECT_NE(std::string(e.what()).find("context holds 64"), std::string::npos) << e.what();
  }
  GenerationRequest broken = LoadCase("02_one_image_jpeg");
  broken.images[0].bytes.resize(100);  // a truncated JPEG
  try {
    engine->Submit(std::move(broken), c.Sink());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("image 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine->Stats().requests_finished, 0);
}

// A context of 0 divided by zero on the first request (SIGFPE), and a video limit below
// zero refused every request with a video as the client's fault.
TEST(Engine, RefusesOptionsItCannotWorkWith) {
  struct Case {
    std::function<void(EngineOptions&)> set;
    std::string error;
  };
  const Case cases[] = {
      {[](EngineOptions& o) { o.context_tokens = 0; },
       "context_tokens: must be between 16 and 16777216, got 0"},
      {[](EngineOptions& o) { o.video_limits.max_videos_per_request = -1; },
       "video_limits.max_videos_per_request: must be at least 0, got -1"},
      {[](EngineOptions& o) { o.video_limits.max_seconds = std::nan(""); },
       "video_limits.max_seconds: must be a positive number of seconds, got nan"},
  };
  for (const Case& c : cases) {
    EngineOptions options;
    c.set(options);
    try {
      MakeEngine(options);
      ADD_FAILURE() << c.error;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(std::string(e.what()), c.error);
    }
  }
}

TEST(Engine, ShutdownCancelsWhatIsLeft) {
  auto engine = MakeEngine();
  GenerationRequest r = LoadCase("01_text_only");
  r.ignore_eos = true;
  r.max_tokens = 16000;
  Collector c;
  engine->Submit(std::move(r), c.Sink());
  engine->Shutdown(0.05);
  c.Wait();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kCancelled);
  EXPECT_THROW(engine->Submit(LoadCase("01_text_only"), c.Sink()), Error);
}

}  // namespace
}  // namespace qvl
