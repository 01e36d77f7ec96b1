#include "cli/bench_compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"

namespace qvl::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A report as `qvl bench --json` writes it (the fields the comparison reads).
nlohmann::ordered_json Report() {
  return {{"qvl_build", "qvl-1352040"},
          {"dtype", "q8"},
          {"vision_dtype", "q8"},
          {"threads", 2},
          {"kernel_tier", "avx512bf16"},
          {"cpu", "AMD EPYC"},
          {"image_tokens", 768},
          {"prompt_tokens", 782},
          {"generated_tokens", 64},
          {"vision_encode_ms", 3000.0},
          {"prefill_ms", 2000.0},
          {"time_to_first_token_ms", 5000.0},
          {"decode_tok_s", 25.0},
          {"peak_rss_mib", 2500.0},
          {"memory_bandwidth_gb_s", 56.0},
          {"compute_peak", {{"unit", "avx512 vnni"}, {"int8_tops", 1.8}}}};
}

BenchBaseline Baseline(const nlohmann::ordered_json& report) {
  return {"base.json", nlohmann::json::parse(report.dump())};
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const StageChange& Stage(const BenchComparison& c, const std::string& key) {
  for (const StageChange& s : c.stages) {
    if (s.key == key) return s;
  }
  ADD_FAILURE() << "no stage " << key;
  return c.stages.front();
}

TEST(BenchCompare, TheSameFiguresPass) {
  const BenchComparison c = CompareBench(Baseline(Report()), Report(), 10);
  EXPECT_FALSE(c.Regressed());
  std::vector<std::string> keys;
  for (const StageChange& s : c.stages) {
    keys.push_back(s.key);
    EXPECT_DOUBLE_EQ(s.slowdown_percent, 0.0) << s.key;
  }
  // No video in either report: its stage is left out.
  EXPECT_THAT(keys, ElementsAre("vision_encode_ms", "prefill_ms", "time_to_first_token_ms",
                                "decode_tok_s", "peak_rss_mib"));
  EXPECT_TRUE(c.notes.empty());
  EXPECT_EQ(RegressionSummary(c), "");
}

TEST(BenchCompare, ASlowerStageOverTheLimitRegresses) {
  nlohmann::ordered_json now = Report();
  now["vision_encode_ms"] = 3450.0;  // 15 % slower
  now["prefill_ms"] = 2100.0;        // 5 %: within the limit
  now["decode_tok_s"] = 20.0;        // a token takes 25 % longer
  now["peak_rss_mib"] = 2000.0;      // smaller
  const BenchComparison c = CompareBench(Baseline(Report()), now, 10);
  EXPECT_TRUE(c.Regressed());
  EXPECT_NEAR(Stage(c, "vision_encode_ms").slowdown_percent, 15.0, 1e-9);
  EXPECT_TRUE(Stage(c, "vision_encode_ms").regressed);
  EXPECT_NEAR(Stage(c, "prefill_ms").slowdown_percent, 5.0, 1e-9);
  EXPECT_FALSE(Stage(c, "prefill_ms").regressed);
  EXPECT_NEAR(Stage(c, "decode_tok_s").slowdown_percent, 25.0, 1e-9);
  EXPECT_TRUE(Stage(c, "decode_tok_s").regressed);
  EXPECT_NEAR(Stage(c, "peak_rss_mib").slowdown_percent, -20.0, 1e-9);
  EXPECT_FALSE(Stage(c, "peak_rss_mib").regressed);
  EXPECT_EQ(RegressionSummary(c), "vision encode 15.0 % slower, decode 25.0 % slower");
  const std::string table = FormatComparison(c);
  EXPECT_THAT(table, HasSubstr("against the baseline base.json (a stage more than 10 % worse"));
  EXPECT_THAT(table, HasSubstr("+15.0 % slower"));
  EXPECT_THAT(table, HasSubstr("-20.0 %"));
}

TEST(BenchCompare, TheLimitIsTheCallers) {
  nlohmann::ordered_json now = Report();
  now["peak_rss_mib"] = 2800.0;  // 12 % larger
  EXPECT_FALSE(CompareBench(Baseline(Report()), now, 20).Regressed());
  const BenchComparison c = CompareBench(Baseline(Report()), now, 10);
  EXPECT_EQ(RegressionSummary(c), "peak RSS 12.0 % larger");
  // A limit of 0: any slowdown at all fails.
  now = Report();
  now["prefill_ms"] = 2000.5;
  EXPECT_TRUE(CompareBench(Baseline(Report()), now, 0).Regressed());
}

TEST(BenchCompare, JsonFormNamesEveryStage) {
  nlohmann::ordered_json now = Report();
  now["time_to_first_token_ms"] = 6000.0;
  const nlohmann::ordered_json j = ComparisonJson(CompareBench(Baseline(Report()), now, 10));
  EXPECT_EQ(j["file"], "base.json");
  EXPECT_EQ(j["max_slowdown_percent"], 10.0);
  EXPECT_EQ(j["regressed"], true);
  ASSERT_EQ(j["stages"].size(), 5u);
  EXPECT_EQ(j["stages"][2]["field"], "time_to_first_token_ms");
  EXPECT_EQ(j["stages"][2]["baseline"], 5000.0);
  EXPECT_EQ(j["stages"][2]["now"], 6000.0);
  EXPECT_NEAR(j["stages"][2]["slowdown_percent"].get<double>(), 20.0, 1e-9);
  EXPECT_EQ(j["stages"][2]["regressed"], true);
}

TEST(BenchCompare, AVideoStageIsComparedWhenBothHaveIt) {
  nlohmann::ordered_json base = Report(), now = Report();
  base["video_tokens"] = 160;
  now["video_tokens"] = 160;
  base["video_encode_ms"] = 400.0;
  now["video_encode_ms"] = 500.0;
  const BenchComparison c = CompareBench(Baseline(base), now, 10);
  EXPECT_EQ(RegressionSummary(c), "video encode 25.0 % slower");
}

TEST(BenchCompare, TextOnlyLeavesTheVisionStageOut) {
  nlohmann::ordered_json base = Report(), now = Report();
  base["vision_encode_ms"] = 0.0;
  now["vision_encode_ms"] = 0.0;
  for (const StageChange& s : CompareBench(Baseline(base), now, 10).stages) {
    EXPECT_NE(s.key, "vision_encode_ms");
  }
}

TEST(BenchCompare, NotesSayHowTheMachineDiffered) {
  nlohmann::ordered_json now = Report();
  now["memory_bandwidth_gb_s"] = 39.2;      // -30 %
  now["compute_peak"]["int8_tops"] = 1.75;  // -3 %: within the limit, no note
  now["kernel_tier"] = "avx2";
  now["cpu"] = "Intel Xeon";
  const BenchComparison c = CompareBench(Baseline(Report()), now, 10);
  EXPECT_THAT(c.notes, ElementsAre("another CPU: baseline \"AMD EPYC\"",
                                   "other kernels: baseline tier avx512bf16, now avx2",
                                   "memory read bandwidth 39.20 GB/s, baseline 56.00 (-30 %): "
                                   "decode follows it"));
  EXPECT_THAT(FormatComparison(c), HasSubstr("  note: other kernels"));
}

TEST(BenchCompare, AnotherRequestIsRefusedNamingTheField) {
  const BenchBaseline base = Baseline(Report());
  // Only the fields given are compared (the flags, before any run).
  EXPECT_NO_THROW(CheckSameRequest(base, {{"dtype", "q8"}, {"threads", 2}}));
  try {
    CheckSameRequest(base, {{"dtype", "q4"}});
    FAIL() << "another dtype was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("--baseline base.json measured dtype q8, this run q4"));
  }
  nlohmann::ordered_json now = Report();
  now["prompt_tokens"] = 94;
  EXPECT_THROW(CheckSameRequest(base, now), Error);
  // A video in this run only: the baseline's missing video_tokens counts as 0.
  now = Report();
  now["video_tokens"] = 160;
  try {
    CheckSameRequest(base, now);
    FAIL() << "a video against an image-only baseline was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("measured video_tokens 0, this run 160"));
  }
}

TEST(BenchCompare, ReadsAReportFile) {
  const std::string path = WriteFile("report.json", Report().dump(2));
  const BenchBaseline b = ReadBenchBaseline(path);
  EXPECT_EQ(b.path, path);
  EXPECT_EQ(b.report["prefill_ms"], 2000.0);
}

TEST(BenchCompare, ABadFileIsOneErrorNamingItAndTheField) {
  const auto message = [](const std::string& path) {
    try {
      ReadBenchBaseline(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message(::testing::TempDir() + "/missing.json"), HasSubstr("missing.json"));
  const std::string broken = WriteFile("broken.json", "{\"dtype\": ");
  EXPECT_THAT(message(broken), HasSubstr("broken.json: malformed JSON"));
  nlohmann::ordered_json report = Report();
  report.erase("prefill_ms");
  const std::string partial = WriteFile("partial.json", report.dump());
  EXPECT_THAT(message(partial), HasSubstr("partial.json: prefill_ms is missing"));
  report = Report();
  report["threads"] = "two";
  const std::string typed = WriteFile("typed.json", report.dump());
  EXPECT_THAT(message(typed), HasSubstr("typed.json: threads must be an integer"));
  const std::string array = WriteFile("array.json", "[1, 2]");
  EXPECT_THAT(message(array), HasSubstr("array.json"));
}

}  // namespace
}  // namespace qvl::cli
