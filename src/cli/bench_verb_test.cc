// Runs `qvl bench` on the fixture model: the request it measures is the fixture's
// (same prompt tokens as the reference) for an image and for a video, every figure is
// present, a saved report serves as the next run's baseline, and bad flags are one error
// line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/qvl_runner.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;

const std::string kImage =
    std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";

TEST(BenchVerb, MeasuresTheFixtureRequest) {
  const QvlRun r = RunQvl("bench -m " + kTinyModelDir + " --image " + kImage +
                          " --tokens 3 --runs 1 --threads 2 --dtype bf16 --vision-dtype bf16"
                          " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["prompt_tokens"], 94);  // as the fixture case 02_one_image_jpeg
  EXPECT_EQ(j["image_tokens"], 80);
  EXPECT_EQ(j["generated_tokens"], 3);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["dtype"], "bf16");
  for (const char* key : {"preprocess_ms", "vision_encode_ms", "prefill_ms", "prefill_tok_s",
                          "time_to_first_token_ms", "decode_tok_s", "total_ms", "load_cold_ms",
                          "load_warm_ms", "peak_rss_mib", "memory_bandwidth_gb_s",
                          "decode_bytes_per_token", "decode_percent_of_bound"}) {
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  }
  EXPECT_GE(j["time_to_first_token_ms"].get<double>(),
            j["vision_encode_ms"].get<double>() + j["prefill_ms"].get<double>());
  EXPECT_FALSE(j["kernel_tier"].get<std::string>().empty());
}

const std::string kClipDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/07_video_frames";

// The fixture clip as a file: the request of case 07 (same prompt tokens), the video's
// frames and grid, and every stage of the video timed.
TEST(BenchVerb, MeasuresAVideoFileStageByStage) {
  const QvlRun r = RunQvl("bench -m " + kTinyModelDir + " --video " + kClipDir +
                          "/frames/clip.mp4 --prompt 'What moves in this video?' --tokens 2"
                          " --runs 1 --threads 2 --dtype bf16 --vision-dtype bf16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["prompt_tokens"], 190);  // as the fixture case 07_video_frames
  EXPECT_EQ(j["video_tokens"], 160);
  EXPECT_EQ(j["image_tokens"], 0);
  EXPECT_EQ(j["video_frame_list"], false);
  EXPECT_EQ(j["video_frames"], 8);
  EXPECT_EQ(j["video_fps"], 4.0);
  EXPECT_EQ(j["video_sampled_frames"], 4);
  EXPECT_GE(j["video_decoded_frames"].get<int>(), 4);
  EXPECT_LE(j["video_decoded_frames"].get<int>(), 8);
  EXPECT_EQ(j["video_size"], (nlohmann::json{320, 240}));
  EXPECT_EQ(j["video_resized_size"], (nlohmann::json{320, 256}));
  EXPECT_EQ(j["video_grid_thw"], (nlohmann::json{2, 16, 20}));
  for (const char* key : {"video_demux_decode_ms", "video_sample_resize_patches_ms",
                          "video_encode_ms", "preprocess_ms", "vision_encode_ms", "prefill_ms",
                          "time_to_first_token_ms", "decode_tok_s"}) {
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  }
  EXPECT_GE(
      j["preprocess_ms"].get<double>(),
      j["video_demux_decode_ms"].get<double>() + j["video_sample_resize_patches_ms"].get<double>());
  EXPECT_GE(j["vision_encode_ms"].get<double>(), j["video_encode_ms"].get<double>());
}

// The same clip as its frames beside an image, at a video budget of 80 tokens: its
// two frame pairs' timestamps and markers are in the budget, so the frames become two
// pairs of 192x128 = 48 tokens (70 when the budget counted the frames alone); the table
// names every video stage.
TEST(BenchVerb, VideoFramesBesideAnImageWithABudget) {
  std::string frames;
  for (int k = 0; k < 8; ++k)
    frames += " " + kClipDir + "/frames/clip/00" + std::to_string(k) + ".png";
  const QvlRun r =
      RunQvl("bench -m " + kTinyModelDir + " --image " + kImage + " --video-frames" + frames +
             " --video-fps 4 --max-video-tokens 80 --tokens 2 --runs 1"
             " --dtype f32 --vision-dtype f32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("frames of a video from " + kClipDir +
                        "/frames/clip/000.png 320x240, 8 frames at 4 fps -> 4 sampled at 192x128"));
  EXPECT_THAT(r.out, HasSubstr(" (80 image, 48 video), 2 generated"));
  EXPECT_THAT(r.out, HasSubstr("    video demux + decode"));
  EXPECT_THAT(r.out, HasSubstr("(4 frames decoded, 4 sampled)"));
  EXPECT_THAT(r.out, HasSubstr("    video sample/resize/patch"));
  EXPECT_THAT(r.out, HasSubstr("    of the video"));
}

TEST(BenchVerb, TableWithoutAnImage) {
  const QvlRun r = RunQvl("bench -m " + kTinyModelDir +
                          " --prompt hello --tokens 2 --runs 1 --dtype f32 --vision-dtype f32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("prompt tokens (0 image, 0 video), 2 generated, median of 1 runs\n"));
  EXPECT_THAT(r.out, HasSubstr("  time to first token"));
  EXPECT_THAT(r.out, HasSubstr("% of the "));
}

std::string WriteReport(const std::string& name, const nlohmann::json& report) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << report.dump(2);
  return path;
}

// A report saved with --json is the next run's baseline: the figures side by side, exit
// status 3 and one line naming the stages when one got worse than --max-slowdown allows,
// and a baseline of another request refused before the runs.
TEST(BenchVerb, ComparesWithASavedBaseline) {
  const std::string args = "bench -m " + kTinyModelDir + " --image " + kImage +
                           " --tokens 3 --runs 1 --threads 2 --dtype bf16 --vision-dtype bf16";
  QvlRun r = RunQvl(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_THAT(report["qvl_build"].get<std::string>(), ::testing::StartsWith("qvl-"));
  EXPECT_THAT(report["measured_at"].get<std::string>(), ::testing::EndsWith("Z"));

  // The same figures a thousand times slower: within any limit.
  nlohmann::json slow = report;
  for (const char* key : {"vision_encode_ms", "prefill_ms", "time_to_first_token_ms"}) {
    slow[key] = report[key].get<double>() * 1000;
  }
  slow["decode_tok_s"] = report["decode_tok_s"].get<double>() / 1000;
  slow["peak_rss_mib"] = report["peak_rss_mib"].get<double>() * 1000;
  r = RunQvl(args + " --json --baseline " + WriteReport("slow.json", slow));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json compared = nlohmann::json::parse(r.out);
  EXPECT_EQ(compared["baseline"]["regressed"], false);
  EXPECT_EQ(compared["baseline"]["max_slowdown_percent"], 10.0);
  ASSERT_EQ(compared["baseline"]["stages"].size(), 5u);
  for (const nlohmann::json& stage : compared["baseline"]["stages"]) {
    EXPECT_LT(stage["slowdown_percent"].get<double>(), -90.0) << stage.dump();
  }

  // A thousand times faster: every stage but peak RSS regressed.
  nlohmann::json fast = report;
  for (const char* key : {"vision_encode_ms", "prefill_ms", "time_to_first_token_ms"}) {
    fast[key] = report[key].get<double>() / 1000;
  }
  fast["decode_tok_s"] = report["decode_tok_s"].get<double>() * 1000;
  const std::string fast_path = WriteReport("fast.json", fast);
  r = RunQvl(args + " --baseline " + fast_path + " --max-slowdown 50");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, HasSubstr("against the baseline " + fast_path +
                               " (a stage more than 50 % worse fails):\n  vision encode"));
  EXPECT_THAT(r.err, ::testing::StartsWith("qvl bench: worse than the baseline " + fast_path +
                                           ": vision encode "));
  EXPECT_THAT(r.err, HasSubstr("% slower, prefill "));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("peak RSS")));

  r = RunQvl("bench -m " + kTinyModelDir + " --image " + kImage +
             " --tokens 3 --runs 1 --threads 2 --dtype q8 --baseline " + fast_path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --baseline " + fast_path +
                       " measured dtype bf16, this run q8: run qvl bench with the flags and "
                       "files the baseline was measured with\n");
  EXPECT_EQ(r.out, "");
  r = RunQvl(args + " --max-slowdown -1 --baseline " + fast_path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--max-slowdown: must be between 0 and 1000, got -1"));
}

TEST(BenchVerb, BadFlagsAreOneErrorLine) {
  QvlRun r = RunQvl("bench -m " + kTinyModelDir + " --tokens 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --tokens must be at least 1\n");
  r = RunQvl("bench -m " + kTinyModelDir + " --threads -3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--threads: Value -3 not in range"));
  r = RunQvl("bench -m " + kTinyModelDir + " --dtype q3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --dtype q3: use f32, bf16, q8, q4 or w8a8\n");
  r = RunQvl("bench -m " + kTinyModelDir + " --image /nonexistent.jpg");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.jpg"));
  r = RunQvl("bench -m " + kTinyModelDir + " --video " + kClipDir + "/frames/clip.mp4" +
             " --video-frames " + kImage);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: give --video or --video-frames, not both\n");
  r = RunQvl("bench -m " + kTinyModelDir + " --video " + kImage);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("is not a video file qvl can read"));
}

}  // namespace
}  // namespace qvl::cli
