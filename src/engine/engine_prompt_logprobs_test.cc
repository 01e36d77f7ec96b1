// Prompt logprobs (GenerationRequest::prompt_logprobs): every prompt token's logprob given
// the tokens before it, checked against what the engine reports for a first generated
// token forced to be that prompt token; across the chunks that cut long prompts, with the
// prefix cache, beside other requests, through a preemption, and beside the answer, which
// they leave as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "base/log.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"
#include "engine/engine_test_cases.h"
#include "text/tokenizer.h"

namespace qvl {
namespace {

constexpr float kTolerance = 1e-4f;

// What one request got back.
struct Scored {
  std::vector<GeneratedToken> prompt;  // GenerationUpdate::prompt_tokens
  int prompt_updates = 0;              // updates that carried them
  std::vector<GeneratedToken> generated;
  std::string text;
  GenerationUpdate last;
};

Scored Score(Engine& engine, GenerationRequest r) {
  Scored out;
  Collector c;
  UpdateSink collect = c.Sink();
  engine.Submit(std::move(r), [&out, collect](GenerationUpdate&& u) {
    if (!u.prompt_tokens.empty()) {
      EXPECT_EQ(u.choice, 0);
      EXPECT_TRUE(u.finished || !u.text.empty() || !u.tokens.empty());
      ++out.prompt_updates;
      out.prompt = u.prompt_tokens;
    }
    for (const GeneratedToken& t : u.tokens) out.generated.push_back(t);
    out.text += u.text;
    collect(std::move(u));
  });
  c.Wait();
  out.last = std::move(c.last);
  return out;
}

GenerationRequest RawPrompt(const std::string& text, int prompt_logprobs) {
  GenerationRequest r;
  r.prompt_text = text;
  r.prompt_logprobs = prompt_logprobs;
  r.sampling.temperature = 0.0f;
  r.max_tokens = 8;
  return r;
}

// Longer than kPromptLogprobRows tokens, so that its logprobs come from several chunks.
std::string LongText() {
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += "Sentence " + std::to_string(i) + " says that the river runs to the sea. ";
  }
  return text;
}

// Position t's entry as the engine gives it for a first generated token: the prompt
// tokens before t, the answer's first token forced (by its bias) to be token t, its
// logprob and alternatives taken from the raw logits.
GeneratedToken Reference(Engine& engine, const std::vector<int32_t>& prompt, size_t t, int n) {
  GenerationRequest r;
  r.prompt_tokens.assign(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(t));
  r.logit_bias = {{prompt[t], 100.0f}};
  r.top_logprobs = n;
  r.max_tokens = 1;
  r.ignore_eos = true;
  r.sampling.temperature = 0.0f;
  Scored s = Score(engine, std::move(r));
  EXPECT_EQ(s.last.finish_reason, FinishReason::kLength) << s.last.error;
  EXPECT_EQ(s.generated.size(), 1u);
  return s.generated.empty() ? GeneratedToken() : s.generated[0];
}

void ExpectSameEntry(const GeneratedToken& got, const GeneratedToken& want) {
  EXPECT_EQ(got.chosen.id, want.chosen.id);
  EXPECT_EQ(got.chosen.text, want.chosen.text);
  EXPECT_NEAR(got.chosen.logprob, want.chosen.logprob, kTolerance);
  ASSERT_EQ(got.top.size(), want.top.size());
  for (size_t i = 0; i < got.top.size(); ++i) {
    EXPECT_EQ(got.top[i].id, want.top[i].id) << "alternative " << i;
    EXPECT_EQ(got.top[i].text, want.top[i].text) << "alternative " << i;
    EXPECT_NEAR(got.top[i].logprob, want.top[i].logprob, kTolerance) << "alternative " << i;
  }
}

std::vector<int32_t> Ids(const std::vector<GeneratedToken>& entries) {
  std::vector<int32_t> ids;
  for (const GeneratedToken& e : entries) ids.push_back(e.chosen.id);
  return ids;
}

// Entry 0 has no context; every other one is a logprob with `n` alternatives, best first.
void ExpectWellFormed(const std::vector<GeneratedToken>& entries, size_t n) {
  ASSERT_FALSE(entries.empty());
  EXPECT_TRUE(std::isnan(entries[0].chosen.logprob));
  EXPECT_TRUE(entries[0].top.empty());
  for (size_t t = 1; t < entries.size(); ++t) {
    SCOPED_TRACE("prompt token " + std::to_string(t));
    const GeneratedToken& e = entries[t];
    EXPECT_TRUE(std::isfinite(e.chosen.logprob));
    EXPECT_LE(e.chosen.logprob, 0.0f);
    ASSERT_EQ(e.top.size(), n);
    bool among_top = false;
    for (size_t i = 0; i < e.top.size(); ++i) {
      EXPECT_LE(e.top[i].logprob, 0.0f);
      if (i > 0) {
        EXPECT_GE(e.top[i - 1].logprob, e.top[i].logprob);
      }
      among_top |= e.top[i].id == e.chosen.id;
    }
    if (n > 0 && !among_top) {
      EXPECT_LE(e.chosen.logprob, e.top.back().logprob);
    }
    // Its rank: 1 + the alternatives more likely than it, while it is among them.
    size_t above = 0;
    for (const TokenLogprob& alternative : e.top) above += alternative.logprob > e.chosen.logprob;
    if (among_top) {
      EXPECT_EQ(e.rank, static_cast<int32_t>(above + 1));
    } else {
      EXPECT_GT(e.rank, static_cast<int32_t>(n));
    }
  }
  EXPECT_EQ(entries[0].rank, 0);
}

TEST(EnginePromptLogprobs, EveryPromptTokenHasItsLogprobAndAlternatives) {
  auto engine = MakeEngine();
  const std::string text = "The quick brown fox jumps over the lazy dog by the river.";
  const Scored s = Score(*engine, RawPrompt(text, 3));
  ASSERT_NE(s.last.finish_reason, FinishReason::kError) << s.last.error;
  EXPECT_EQ(s.prompt_updates, 1);
  ASSERT_EQ(static_cast<int64_t>(s.prompt.size()), s.last.usage.prompt_tokens);
  EXPECT_EQ(Ids(s.prompt), engine->tokenizer().Encode(text));
  for (const GeneratedToken& e : s.prompt) {
    EXPECT_EQ(e.chosen.text, std::string(engine->tokenizer().TokenBytes(e.chosen.id)));
  }
  ExpectWellFormed(s.prompt, 3);

  // Without asking, none come.
  const Scored plain = Score(*engine, RawPrompt(text, -1));
  EXPECT_EQ(plain.prompt_updates, 0);
  // 0 alternatives: the logprobs alone.
  const Scored bare = Score(*engine, RawPrompt(text, 0));
  ASSERT_EQ(bare.prompt.size(), s.prompt.size());
  ExpectWellFormed(bare.prompt, 0);
  for (size_t t = 1; t < s.prompt.size(); ++t) {
    EXPECT_EQ(bare.prompt[t].chosen.logprob, s.prompt[t].chosen.logprob) << t;
  }
}

TEST(EnginePromptLogprobs, EachIsTheLogprobOfThatTokenAfterThoseBefore) {
  auto engine = MakeEngine();
  const Scored s = Score(*engine, RawPrompt("Paris is the capital and largest city of France.", 5));
  ASSERT_GT(s.prompt.size(), 5u);
  const std::vector<int32_t> prompt = Ids(s.prompt);
  for (size_t t = 1; t < prompt.size(); ++t) {
    SCOPED_TRACE("prompt token " + std::to_string(t));
    ExpectSameEntry(s.prompt[t], Reference(*engine, prompt, t, 5));
  }
}

TEST(EnginePromptLogprobs, ALongPromptHasEveryEntryAcrossItsChunks) {
  auto engine = MakeEngine();
  const Scored s = Score(*engine, RawPrompt(LongText(), 4));
  ASSERT_NE(s.last.finish_reason, FinishReason::kError) << s.last.error;
  ASSERT_GT(s.prompt.size(), static_cast<size_t>(3 * kPromptLogprobRows));
  ASSERT_EQ(static_cast<int64_t>(s.prompt.size()), s.last.usage.prompt_tokens);
  ExpectWellFormed(s.prompt, 4);
  // Each against a prompt read in one chunk; at a chunk's end (every kPromptLogprobRows
  // tokens), its last row predicts the next chunk's first token.
  const std::vector<int32_t> prompt = Ids(s.prompt);
  for (size_t t = 1; t < prompt.size(); ++t) {
    SCOPED_TRACE("prompt token " + std::to_string(t));
    ExpectSameEntry(s.prompt[t], Reference(*engine, prompt, t, 4));
  }
}

TEST(EnginePromptLogprobs, APromptAskedAgainIsComputedNotTakenFromThePrefixCache) {
  auto engine = MakeEngine();
  const Scored first = Score(*engine, RawPrompt(LongText(), 2));
  const Scored second = Score(*engine, RawPrompt(LongText(), 2));
  EXPECT_EQ(first.last.usage.cached_tokens, 0);
  EXPECT_EQ(second.last.usage.cached_tokens, 0);
  ASSERT_EQ(second.prompt.size(), first.prompt.size());
  for (size_t t = 1; t < first.prompt.size(); ++t) {
    SCOPED_TRACE("prompt token " + std::to_string(t));
    ExpectSameEntry(second.prompt[t], first.prompt[t]);
  }
  EXPECT_EQ(second.text, first.text);
  // Its KV is left for others.
  const Scored plain = Score(*engine, RawPrompt(LongText(), -1));
  EXPECT_GT(plain.last.usage.cached_tokens, 0);
  EXPECT_EQ(plain.text, first.text);
}

TEST(EnginePromptLogprobs, OutOfRangeIsRefusedNamingTheField) {
  auto engine = MakeEngine();
  for (int bad : {21, -2}) {
    try {
      Score(*engine, RawPrompt("Hello", bad));
      FAIL() << bad;
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "prompt_logprobs");
      EXPECT_EQ(std::string(e.what()),
                "prompt_logprobs: must be between 0 and 20, got " + std::to_string(bad));
    }
  }
  EXPECT_EQ(Score(*engine, RawPrompt("Hello world", 20)).prompt.size(), 2u);
  // An embedding request has no prompt logprobs.
  GenerationRequest embed = RawPrompt("Hello world", 3);
  embed.embed = true;
  const Scored e = Score(*engine, std::move(embed));
  EXPECT_EQ(e.last.finish_reason, FinishReason::kStop);
  EXPECT_EQ(e.prompt_updates, 0);
}

// The answer is sampled from the same last row as without them; a chat prompt's image pad
// tokens get entries like any other token, and the other choices of the request none.
TEST(EnginePromptLogprobs, TheAnswerIsTheSameWithAndWithoutThem) {
  GenerationRequest chat = LoadCase("02_one_image_jpeg");
  chat.top_logprobs = 2;
  chat.ignore_eos = true;
  GenerationRequest raw = RawPrompt(LongText(), -1);
  raw.top_logprobs = 2;
  raw.ignore_eos = true;
  for (const GenerationRequest& plain : {raw, chat}) {
    auto engine = MakeEngine();
    const Scored without = Score(*engine, plain);
    GenerationRequest asked = plain;
    asked.prompt_logprobs = 1;
    const Scored with = Score(*engine, asked);
    ASSERT_NE(with.last.finish_reason, FinishReason::kError) << with.last.error;
    EXPECT_EQ(without.prompt_updates, 0);
    EXPECT_EQ(with.prompt_updates, 1);
    EXPECT_EQ(static_cast<int64_t>(with.prompt.size()), with.last.usage.prompt_tokens);
    ExpectWellFormed(with.prompt, 1);
    EXPECT_EQ(with.text, without.text);
    ASSERT_EQ(with.generated.size(), without.generated.size());
    for (size_t i = 0; i < with.generated.size(); ++i) {
      ExpectSameEntry(with.generated[i], without.generated[i]);
    }
  }
  auto engine = MakeEngine();
  GenerationRequest asked = chat;
  asked.prompt_logprobs = 1;
  const Scored with = Score(*engine, asked);
  const int32_t pad = engine->model().config().image_token_id;
  int64_t pads = 0;
  for (const GeneratedToken& e : with.prompt) pads += e.chosen.id == pad ? 1 : 0;
  ASSERT_EQ(with.last.timings.images.size(), 1u);
  EXPECT_EQ(pads, with.last.timings.images[0].tokens);

  // n = 2: choice 0 alone carries them (Run checks the choice).
  asked.n = 2;
  asked.sampling.temperature = 0.7f;
  asked.sampling.seed = 3;
  ChoicesCollector choices(2);
  UpdateSink collect = choices.Sink();
  int carried = 0;
  engine->Submit(asked, [&carried, collect](GenerationUpdate&& u) {
    if (!u.prompt_tokens.empty()) carried += u.choice == 0 ? 1 : 100;
    collect(std::move(u));
  });
  choices.Wait();
  EXPECT_EQ(carried, 1);
}

// Two prompts with logprobs share the step's logits rows for them, beside a chat with an
// image: each gets what it gets alone.
TEST(EnginePromptLogprobs, RequestsTogetherGetWhatTheyGetAlone) {
  std::vector<GenerationRequest> requests = {RawPrompt(LongText(), 2),
                                             RawPrompt("One two three four five six", 2),
                                             LoadCase("02_one_image_jpeg")};
  for (GenerationRequest& r : requests) r.top_logprobs = 1;
  std::vector<Scored> alone;
  for (const GenerationRequest& r : requests) alone.push_back(Score(*MakeEngine(), r));

  auto engine = MakeEngine();
  std::vector<Scored> together(requests.size());
  std::vector<std::unique_ptr<Collector>> collectors;
  std::vector<UpdateSink> sinks;
  for (size_t i = 0; i < requests.size(); ++i) {
    collectors.push_back(std::make_unique<Collector>());
    UpdateSink collect = collectors.back()->Sink();
    Scored* out = &together[i];
    sinks.push_back([out, collect](GenerationUpdate&& u) {
      if (!u.prompt_tokens.empty()) out->prompt = u.prompt_tokens;
      for (const GeneratedToken& t : u.tokens) out->generated.push_back(t);
      out->text += u.text;
      collect(std::move(u));
    });
  }
  engine->SubmitAll(requests, std::move(sinks));
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    collectors[i]->Wait();
    EXPECT_EQ(together[i].text, alone[i].text);
    ASSERT_EQ(together[i].generated.size(), alone[i].generated.size());
    for (size_t t = 0; t < alone[i].generated.size(); ++t) {
      ExpectSameEntry(together[i].generated[t], alone[i].generated[t]);
    }
    ASSERT_EQ(together[i].prompt.size(), alone[i].prompt.size());
    for (size_t t = 1; t < alone[i].prompt.size(); ++t) {
      SCOPED_TRACE("prompt token " + std::to_string(t));
      ExpectSameEntry(together[i].prompt[t], alone[i].prompt[t]);
    }
  }
}

// A prompt preempted for KV memory halfway is read again from its start, as the prefix
// cache may not serve it: its entries are the ones it gets alone, each once.
TEST(EnginePromptLogprobs, APromptPreemptedHalfwayKeepsItsEntries) {
  EngineOptions options;
  options.kv_page_tokens = 16;
  options.kv_cache_bytes = 8 * 32 * 1024;  // 8 of the tiny model's pages: 128 tokens
  auto engine = MakeEngine(options);
  const std::vector<int32_t> text = engine->tokenizer().Encode(LongText());
  ASSERT_GT(text.size(), 100u);
  // One page, whose answer needs a second one in the next step, when the other prompt has
  // taken the other seven pages and read its first chunk: that prompt is preempted.
  GenerationRequest streaming;
  streaming.prompt_tokens.assign(text.begin(), text.begin() + 16);
  streaming.ignore_eos = true;
  streaming.max_tokens = 40;
  streaming.sampling.temperature = 0.0f;
  GenerationRequest scored;
  scored.prompt_tokens.assign(text.begin(), text.begin() + 100);
  scored.prompt_logprobs = 3;
  scored.max_tokens = 4;
  scored.sampling.temperature = 0.0f;
  scored.request_id = "scored";
  const Scored alone = Score(*MakeEngine(options), scored);
  ASSERT_EQ(alone.prompt.size(), 100u);

  std::mutex mu;
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  });
  Collector first, second;
  std::vector<GeneratedToken> prompt;
  UpdateSink collect = second.Sink();
  std::vector<UpdateSink> sinks;
  sinks.push_back(first.Sink());
  sinks.push_back([&prompt, collect](GenerationUpdate&& u) {
    if (!u.prompt_tokens.empty()) prompt = u.prompt_tokens;
    collect(std::move(u));
  });
  engine->SubmitAll({streaming, scored}, std::move(sinks));
  first.Wait();
  second.Wait();
  SetLogSink({});
  int preempted = 0;
  for (const std::string& line : lines) {
    const bool it =
        line.find("preempting") != std::string::npos && line.find("scored") != std::string::npos;
    preempted += it ? 1 : 0;
  }
  EXPECT_EQ(preempted, 1);
  EXPECT_EQ(second.last.usage.cached_tokens, 0);
  EXPECT_EQ(second.text, alone.text);
  ASSERT_EQ(prompt.size(), alone.prompt.size());
  for (size_t t = 1; t < prompt.size(); ++t) {
    SCOPED_TRACE("prompt token " + std::to_string(t));
    ExpectSameEntry(prompt[t], alone.prompt[t]);
  }
}

}  // namespace
}  // namespace qvl
