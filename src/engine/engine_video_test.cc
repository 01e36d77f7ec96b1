// Videos through the engine: the MP4 of a fixture clip gives the same answer as its
// frames, a follow-up about the same clip reuses its KV pages and encoding, and broken
// or oversized videos are refused with errors naming them.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/captured_log.h"
#include "base/error.h"
#include "base/timer.h"
#include "engine/engine.h"
#include "engine/engine_test_cases.h"
#include "image/video_clip_for_test.h"

namespace qvl {
namespace {

// The case's request with each frame-list video replaced by its MP4 file.
GenerationRequest WithMp4(const std::string& name) {
  GenerationRequest r = LoadCase(name);
  const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
  for (size_t i = 0; i < r.videos.size(); ++i) {
    const std::string file = ReadFileToString(kCasesDir + "/" + name + "/" +
                                              meta["videos"][i]["mp4"]["file"].get<std::string>());
    r.videos[i].frames.clear();
    r.videos[i].fps = 0;
    r.videos[i].file.assign(file.begin(), file.end());
  }
  return r;
}

// The grid and timings of one video request answered with one token; an empty grid
// (tokens 0) when it failed.
ImageGrid OneTokenAbout(Engine& engine, GenerationRequest r) {
  r.max_tokens = 1;
  Collector c;
  engine.Submit(std::move(r), c.Sink());
  c.Wait();
  EXPECT_NE(c.last.finish_reason, FinishReason::kError) << c.last.error;
  return c.last.timings.videos.empty() ? ImageGrid() : c.last.timings.videos[0];
}

TEST(EngineVideo, Mp4GivesTheAnswerOfItsFramesAndFollowUpsReuseTheClip) {
  auto engine = MakeEngine();
  for (const std::string name : {"07_video_frames", "08_video_and_image"}) {
    SCOPED_TRACE(name);
    GenerationRequest r = WithMp4(name);
    r.ignore_eos = true;
    r.top_logprobs = 0;  // the updates then carry the token ids
    Collector c;
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    ASSERT_EQ(c.last.finish_reason, FinishReason::kLength) << c.last.error;
    EXPECT_EQ(c.tokens, GoldenTokens(name));
    const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
    EXPECT_EQ(c.last.usage.prompt_tokens, meta["num_prompt_tokens"].get<int64_t>());
    const ImageGrid& video = c.last.timings.videos.at(0);
    EXPECT_EQ(video.grid_t, meta["videos"][0]["grid_thw"][0]);
    EXPECT_EQ(video.tokens, meta["videos"][0]["num_video_tokens"]);
    EXPECT_EQ(video.frames, meta["videos"][0]["num_input_frames"]);
    EXPECT_EQ(video.sampled_frames, meta["videos"][0]["sampled_indices"].size());
    EXPECT_EQ(c.last.timings.images.size(), meta.value("images", nlohmann::json::array()).size());
    // Its own timings: the file is decoded at least up to its last sampled frame.
    EXPECT_GE(video.decoded_frames, video.sampled_frames);
    EXPECT_LE(video.decoded_frames, video.frames);
    EXPECT_GT(video.decode_ms, 0);
    EXPECT_GT(video.encode_ms, 0);
    double encode_ms = 0;
    for (const ImageGrid& g : c.last.timings.images) {
      EXPECT_GT(g.decode_ms, 0);
      EXPECT_GT(g.encode_ms, 0);
      encode_ms += g.encode_ms;
    }
    EXPECT_NEAR(encode_ms + video.encode_ms, c.last.timings.vision_ms, 1e-6);

    // The same clip again with a follow-up question: the prompt up to the clip's last
    // pad token comes from the prefix cache (in whole KV pages; the encoding is cached
    // for the pad tokens of the last partial page).
    GenerationRequest follow = WithMp4(name);
    ChatMessage answer;
    answer.role = "assistant";
    answer.parts.push_back({ChatPart::Kind::kText, "A square."});
    follow.messages.push_back(answer);
    ChatMessage question;
    question.role = "user";
    question.parts.push_back({ChatPart::Kind::kText, "And then?"});
    follow.messages.push_back(question);
    follow.max_tokens = 2;
    Collector f;
    engine->Submit(std::move(follow), f.Sink());
    f.Wait();
    ASSERT_NE(f.last.finish_reason, FinishReason::kError) << f.last.error;
    const std::vector<int32_t> ids = meta["input_ids"];
    const auto last_pad = std::find(ids.rbegin(), ids.rend(), 151656).base() - ids.begin();
    EXPECT_GT(f.last.usage.cached_tokens, last_pad - EngineOptions().kv_page_tokens);
    EXPECT_TRUE(f.last.timings.videos.at(0).cached);
    EXPECT_EQ(f.last.timings.videos.at(0).encode_ms, 0);
    // Nor is the clip decoded again: its preparation is recalled with its encoding.
    EXPECT_EQ(f.last.timings.videos.at(0).decoded_frames, 0);
    EXPECT_EQ(f.last.timings.videos.at(0).sampled_frames, video.sampled_frames);
  }
}

// Another sampling of the same clip is another preparation: decoded again, with its own
// grid; the first sampling asked again is recalled.
TEST(EngineVideo, TheSameClipSampledOtherwiseIsDecodedAgain) {
  auto engine = MakeEngine();
  const struct {
    int64_t max_frames;
    bool decoded;
  } asks[] = {{0, true}, {2, true}, {0, false}};
  for (const auto& [max_frames, decoded] : asks) {
    GenerationRequest r = WithMp4("07_video_frames");
    r.videos[0].max_frames = max_frames;
    const ImageGrid video = OneTokenAbout(*engine, std::move(r));
    EXPECT_EQ(video.sampled_frames, max_frames == 2 ? 2 : 4);
    EXPECT_EQ(video.decoded_frames > 0, decoded) << max_frames;
  }
}

// A frame list decodes only its sampled frames: clip 07's 8 frames, 4 of them sampled.
TEST(EngineVideo, PreprocessingCountsOnceInTheTimeToFirstToken) {
  // Decoding the clip is part of preprocess_ms, and the time to the first token and the
  // total hold it once: both fit in the time the caller waited.
  auto engine = MakeEngine();
  Collector c;
  const Stopwatch waited;
  engine->Submit(WithMp4("07_video_frames"), c.Sink());
  c.Wait();
  const double waited_ms = waited.Millis();
  const Timings& t = c.last.timings;
  EXPECT_GT(t.preprocess_ms, 0);
  EXPECT_GE(t.ttft_ms, t.preprocess_ms);
  EXPECT_LE(t.ttft_ms, t.total_ms);
  EXPECT_LE(t.total_ms, waited_ms);
}

TEST(EngineVideo, FrameListDecodesOnlyItsSampledFrames) {
  auto engine = MakeEngine();
  GenerationRequest r = LoadCase("07_video_frames");
  r.max_tokens = 1;
  Collector c;
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  ASSERT_NE(c.last.finish_reason, FinishReason::kError) << c.last.error;
  const ImageGrid& video = c.last.timings.videos.at(0);
  EXPECT_EQ(video.frames, 8);
  EXPECT_EQ(video.sampled_frames, 4);
  EXPECT_EQ(video.decoded_frames, 4);
  EXPECT_GT(video.decode_ms, 0);
  EXPECT_GT(video.encode_ms, 0);
}

// A video's own sampling: clip 07 samples 4 frames by default ([0, 2, 5, 7], two pairs);
// max_frames 2 (below min_frames, which it overrides as in transformers) keeps one pair
// of 80 tokens.
TEST(EngineVideo, PerVideoSamplingChangesTheGrid) {
  auto engine = MakeEngine();
  GenerationRequest r = WithMp4("07_video_frames");
  r.videos[0].max_frames = 2;
  const ImageGrid video = OneTokenAbout(*engine, std::move(r));
  EXPECT_EQ(video.sampled_frames, 2);
  EXPECT_EQ(video.grid_t, 1);
  EXPECT_EQ(video.tokens, 80);
}

// The video budget: clip 07 (4 sampled frames of 320x240, 160 tokens at the model's
// budget) follows the server's default, a request's own bound, and the server's limit
// over that bound. A budget in tokens is the video's whole cost in the prompt: its two
// frame pairs of 32 x 32 pixels a token, and their text "<0.2 seconds>" and
// "<1.5 seconds>" with the vision markers, 2 x (6 + 2) tokens. Before, 40 tokens gave
// 30 vision tokens and 16 of text.
TEST(EngineVideo, TokensFollowTheBudgetTimestampsIncluded) {
  EngineOptions options;
  options.max_video_tokens = 40;
  options.video_token_limit = 100;
  auto engine = MakeEngine(options);
  ASSERT_EQ(engine->pixels_per_video_token(), 2 * 32 * 32);
  auto cost = [&](const VideoBudgetRequest& budget) {
    GenerationRequest r = WithMp4("07_video_frames");
    r.videos[0].budget = budget;
    const ImageGrid video = OneTokenAbout(*engine, std::move(r));
    EXPECT_EQ(video.text_tokens, 16);
    return video.tokens + video.text_tokens;
  };
  EXPECT_EQ(cost({}), 24 + 16);
  EXPECT_EQ(cost({.max_tokens = 80}), 48 + 16);
  EXPECT_EQ(cost({.max_tokens = 1000}), 70 + 16);  // the limit: 84 tokens for the frames
  // A bound in pixels counts the frames alone, as the reference's `size` does, within
  // the limit: 80 tokens' pixels make 70 tokens.
  const int64_t per_token = engine->pixels_per_video_token();
  EXPECT_EQ(cost({.max_pixels = 80 * per_token}), 70 + 16);
  // qwen-vl-utils' per-frame bound: 160 x 120 pixels a frame, 2 pairs of 5 x 3 tokens
  // (smart_resize: 160 x 128 is over the bound, so 160 x 96).
  EXPECT_EQ(cost({.max_frame_pixels = 160 * 120}), 2 * 5 * 3 + 16);
}

// What the budget counts is what the prompt holds: the clip adds exactly its tokens and
// text_tokens to the prompt of its question alone.
TEST(EngineVideo, AVideosPromptCostIsItsTokensAndTextTokens) {
  auto engine = MakeEngine();
  auto prompt_tokens = [&](GenerationRequest r, ImageGrid* video) {
    r.max_tokens = 1;
    Collector c;
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    EXPECT_NE(c.last.finish_reason, FinishReason::kError) << c.last.error;
    if (video != nullptr) *video = c.last.timings.videos.at(0);
    return c.last.usage.prompt_tokens;
  };
  GenerationRequest without = LoadCase("07_video_frames");
  ASSERT_EQ(without.messages[0].parts[0].kind, ChatPart::Kind::kVideo);
  without.messages[0].parts.erase(without.messages[0].parts.begin());
  without.videos.clear();
  ImageGrid video;
  const int64_t with = prompt_tokens(LoadCase("07_video_frames"), &video);
  EXPECT_EQ(with - prompt_tokens(std::move(without), nullptr), video.tokens + video.text_tokens);
  EXPECT_EQ(video.text_tokens, 16);
}

// A budget that cannot hold the sampled frames' text and a token per pair says so, and
// what to change, instead of growing past it.
TEST(EngineVideo, ABudgetBelowTheTimestampsIsRefused) {
  auto engine = MakeEngine();
  GenerationRequest r = WithMp4("07_video_frames");
  r.videos[0].budget.max_tokens = 17;
  try {
    engine->Submit(std::move(r), [](GenerationUpdate&&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "video 1: its 4 sampled frames take at least 18 tokens (16 for the timestamps "
                 "and vision markers of its 2 frame pairs, one per pair for the frames), more "
                 "than its video budget of 17 tokens; sample at most about 2 frames "
                 "(max_frames, num_frames or fps) or raise max_video_tokens");
  }
}

TEST(EngineVideo, BadVideosAreRefusedAtSubmit) {
  EngineOptions options;
  options.video_limits.max_seconds = 1;
  auto engine = MakeEngine(options);
  GenerationRequest r = LoadCase("07_video_frames");  // 8 frames at 4 fps: 2 seconds
  try {
    engine->Submit(std::move(r), [](GenerationUpdate&&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("video 1 is 2 seconds long"), std::string::npos)
        << e.what();
  }
  GenerationRequest broken = WithMp4("07_video_frames");
  broken.videos[0].file.resize(100);
  try {
    engine->Submit(std::move(broken), [](GenerationUpdate&&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()).rfind("video 1", 0), 0u) << e.what();
  }
}

// A prompt over the context because of a video says how to send fewer frames: the
// advice for images alone did not name the video's own fields.
TEST(EngineVideo, AVideoOverTheContextIsToldToSendFewerFrames) {
  EngineOptions options;
  options.context_tokens = 128;
  options.default_max_tokens = 16;
  auto engine = MakeEngine(options);
  try {
    engine->Submit(LoadCase("07_video_frames"), [](GenerationUpdate&&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kContextLength);
    EXPECT_NE(std::string(e.what()).find(
                  "send fewer or smaller images, or fewer video frames (fps, max_frames or "
                  "num_frames; a lower max_video_tokens), or shorten the conversation"),
              std::string::npos)
        << e.what();
  }
}

// An MP4 cut short (its index comes first, as in clip 07's: 8 frames at 4 fps) is
// answered from the frames it holds, and the user is told: the video's timings carry
// the length its container declares, and the log warns.
TEST(EngineVideo, AFileCutShortIsAnsweredAndReported) {
  auto engine = MakeEngine();
  GenerationRequest whole = WithMp4("07_video_frames");
  GenerationRequest cut = WithMp4("07_video_frames");
  cut.videos[0].file.resize(70439);  // the first three frames' samples end there
  EXPECT_EQ(OneTokenAbout(*engine, std::move(whole)).declared_seconds, 0);
  CapturedLog log;
  const ImageGrid video = OneTokenAbout(*engine, std::move(cut));
  EXPECT_EQ(video.frames, 3);
  EXPECT_EQ(video.sampled_frames, 3);
  EXPECT_EQ(video.declared_seconds, 2.0);
  EXPECT_EQ(log.Count({"video 1 is cut short: its container declares 2.0 s but holds 3 frames "
                       "at 4 fps (0.8 s); the answer is about those"}),
            1u)
      << (log.lines().empty() ? "nothing logged" : log.lines().back());
}

// A stream that ends before its packets do (7 frames at 5 fps, then 5 packets that decode
// to no frame): its 12 packets at 2 fps sample frames 0, 4, 7 and 11; the stream ends
// after frame 6, which stands for 7 at its own time, and 11 is left out where it was
// frame 6 again. Answered from those 3 frames, each seen once, and reported as a file
// cut short at its last frame.
TEST(EngineVideo, AStreamEndingBeforeItsPacketsIsAnsweredFromItsFramesOnce) {
  auto engine = MakeEngine();
  GenerationRequest r = WithMp4("07_video_frames");
  const std::string clip = EncodeClip({.muxer = "matroska", .frames = 7, .not_coded_after = 5});
  ASSERT_FALSE(clip.empty());
  r.videos[0].file.assign(clip.begin(), clip.end());
  CapturedLog log;
  const ImageGrid video = OneTokenAbout(*engine, std::move(r));
  EXPECT_EQ(video.frames, 7);
  EXPECT_EQ(video.sampled_frames, 3);
  EXPECT_EQ(video.grid_t, 2);
  EXPECT_EQ(video.declared_seconds, 2.4);
  EXPECT_EQ(log.Count({"video 1: 1 of the 4 frames sampled does not decode and is left out; the "
                       "answer is about the 3 that do, from 0.0 s to 1.2 s"}),
            1u)
      << (log.lines().empty() ? "nothing logged" : log.lines().back());
  EXPECT_EQ(log.Count({"video 1 is cut short: its container declares 2.4 s but holds 7 frames "
                       "at 5 fps (1.4 s); the answer is about those"}),
            1u);
}

// A clip of 400 s at 1 fps (clip 07's frames over and over): at 2 fps its 400 frames'
// text alone is past a budget of 1000 tokens, where it was refused. Left to the server,
// it samples fewer frames from first to last, within the budget, and says so; a client
// that chose the sampling itself is refused with what fits.
TEST(EngineVideo, ALongClipLeftToTheServerSamplesWhatFits) {
  EngineOptions options;
  options.max_video_tokens = 1000;
  auto engine = MakeEngine(options);
  auto long_clip = [] {
    GenerationRequest r = LoadCase("07_video_frames");
    VideoInput& video = r.videos[0];
    const std::vector<std::vector<uint8_t>> clip = video.frames;
    video.frames.clear();
    for (int k = 0; k < 400; ++k) video.frames.push_back(clip[k % clip.size()]);
    video.fps = 1;
    return r;
  };
  CapturedLog log;
  const ImageGrid video = OneTokenAbout(*engine, long_clip());
  EXPECT_EQ(video.frames, 400);
  EXPECT_EQ(video.frames_at_rate, 400);
  // Pairs of 320 x 240 pixels (about 70 tokens, under kLeastTokensPerFramePair) and a
  // timestamp of 6 to 7 tokens with its 2 vision markers: 12 fit, resized to 288 x 224
  // (63 tokens) to leave the text its share.
  EXPECT_EQ(video.sampled_frames, 24);
  EXPECT_EQ(video.grid_t, 12);
  EXPECT_EQ(video.tokens, 12 * 63);
  EXPECT_LE(video.tokens + video.text_tokens, 1000);
  EXPECT_EQ(log.Count({"video 1: its 400 frames at 2 fps do not fit its video budget of 1000 "
                       "tokens at a legible size; sampled 24 over its 400.0 s instead (one "
                       "every 16.7 s)"}),
            1u)
      << (log.lines().empty() ? "nothing logged" : log.lines().back());

  for (const bool by_count : {false, true}) {
    GenerationRequest r = long_clip();
    if (by_count) {
      r.videos[0].num_frames = 400;
    } else {
      r.videos[0].sample_fps = 2;
    }
    try {
      engine->Submit(std::move(r), [](GenerationUpdate&&) {});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("more than its video budget of 1000 tokens; sample "
                                           "at most about"),
                std::string::npos)
          << e.what();
    }
  }
}

// The server loads a frame's bytes without looking at them; the decoder refuses a sampled
// frame that is no image, naming it (frame 0 is always sampled).
TEST(EngineVideo, FrameThatIsNoImageIsRefusedAtSubmit) {
  auto engine = MakeEngine(EngineOptions());
  GenerationRequest bad_frame = LoadCase("07_video_frames");
  bad_frame.videos[0].frames[0] = {0, 0, 0};
  try {
    engine->Submit(std::move(bad_frame), [](GenerationUpdate&&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("video 1 frame 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qvl
