// qvl bench -m MODEL [--image IMG]... [--video FILE | --video-frames IMG... [--video-fps F]]
//           [--max-image-tokens N] [--max-video-tokens N] [--prompt P] [--tokens N]
//           [--runs N] [--json] [--baseline REPORT [--max-slowdown PCT]] and the model flags
//           of serve and run (--dtype ...)
// The standard speed report. Drives the model directly (no server, no scheduler): one
// request of images, a video and a prompt, greedy decoding of a fixed number of tokens
// (EOS ignored), each stage timed; medians over --runs runs after one warm-up run. Also
// times a cold and a warm model load and measures this machine's memory read bandwidth
// (before and after the runs, the better of the two), the bound of decode speed, to
// report decode as a fraction of it. With --baseline, sets the figures beside an earlier
// --json report's (bench_compare.h) and exits with kRegressionExitCode when a stage got
// worse by more than --max-slowdown percent.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/bandwidth_probe.h"
#include "base/build_info.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "base/page_cache.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "cli/bench_compare.h"
#include "cli/bench_request.h"
#include "cli/flag_ranges.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "engine/loaded_model.h"
#include "engine/video_budget_policy.h"
#include "image/image_budget.h"
#include "image/video_budget.h"
#include "model/dtype_words.h"
#include "model/kv_pool.h"
#include "model/packed_weight_cache.h"
#include "model/qwen3vl.h"
#include "ops/compute_probe.h"

namespace qvl::cli {
namespace {

struct BenchFlags {
  ModelFlags model;
  std::vector<std::string> images;
  std::string video;                                  // a video file
  std::vector<std::string> video_frames;              // or a clip as its frames
  double video_fps = 2;                               // of video_frames
  int64_t max_image_tokens = 0;                       // 0: the model's budget
  int64_t max_video_tokens = kDefaultMaxVideoTokens;  // 0: the model's budget
  std::string prompt;
  int tokens = 64;
  int runs = 3;
  bool json = false;
  std::string baseline;  // an earlier --json report
  double max_slowdown_percent = 10;
};

constexpr ParamRange kMaxSlowdownRange{"--max-slowdown", 0, 1000};

// Distinct from an error's 1, so that a script tells "slower" from "could not measure".
constexpr int kRegressionExitCode = 3;

// UTC, to the second: when a report (and so a baseline) was measured.
std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc;
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  const MappedFile file(path);
  return {file.data(), file.data() + file.size()};
}

// The files of the request, read once before the runs.
BenchRequest LoadRequest(const BenchFlags& flags) {
  BenchRequest r;
  r.image_paths = flags.images;
  for (const std::string& path : flags.images) r.images.emplace_back(path);
  const bool video = !flags.video.empty() || !flags.video_frames.empty();
  if (video) {
    VideoInput v;
    if (!flags.video.empty()) {
      v.name = flags.video;
      v.file = ReadBytes(flags.video);
    } else {
      v.name = flags.video_frames[0];
      for (const std::string& path : flags.video_frames) v.frames.push_back(ReadBytes(path));
      v.fps = flags.video_fps;
    }
    r.video = std::move(v);
  }
  r.prompt = !flags.prompt.empty() ? flags.prompt
             : video               ? "Describe this video."
                                   : "Describe this image.";
  r.tokens = flags.tokens;
  return r;
}

// The budget flags as the engine reads them: an image's in pixels, a video's in tokens of
// its whole cost in the prompt (its timestamps and vision markers too), with no server
// bounds around them.
void SetBudgets(const BenchFlags& flags, const ModelSettings& settings, BenchRequest* r) {
  r->image_budget = ImageBudgetFromTokens(0, flags.max_image_tokens, settings.image_params);
  VideoBudgetRequest asked;
  asked.max_tokens = flags.max_video_tokens;
  r->video_budget = VideoBudgetFor(ServerVideoBudget{}, asked, settings.tokenizer);
}

double PeakRssMiB() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> FolderFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  return files;
}

// Returns the process's exit code: 0, or kRegressionExitCode.
int RunBench(const BenchFlags& flags) {
  if (flags.tokens < 1) Fail(ErrorCode::kInvalidArgument, "--tokens must be at least 1");
  if (flags.runs < 1) Fail(ErrorCode::kInvalidArgument, "--runs must be at least 1");
  if (flags.max_image_tokens < 0 || flags.max_video_tokens < 0) {
    Fail(ErrorCode::kInvalidArgument,
         "--max-image-tokens and --max-video-tokens must not be "
         "negative");
  }
  if (!flags.video.empty() && !flags.video_frames.empty()) {
    Fail(ErrorCode::kInvalidArgument, "give --video or --video-frames, not both");
  }
  if (!(flags.video_fps > 0)) Fail(ErrorCode::kInvalidArgument, "--video-fps must be above 0");
  const ModelOptions options = flags.model.Options();
  const int threads = flags.model.Threads();
  ThreadPool pool(threads > 0 ? threads : DefaultThreadCount());
  // A baseline of other weights, threads or tokens is refused before minutes of runs.
  std::optional<BenchBaseline> baseline;
  if (!flags.baseline.empty()) {
    baseline = ReadBenchBaseline(flags.baseline);
    CheckSameRequest(*baseline, {{"dtype", DtypeName(options.text_weights)},
                                 {"vision_dtype", DtypeName(options.vision_weights)},
                                 {"threads", pool.size()},
                                 {"generated_tokens", flags.tokens}});
  }
  BenchRequest request = LoadRequest(flags);
  const std::string dir = flags.model.ResolveFolder();

  // Bandwidth first, while the process is small.
  const BandwidthProbe bw = MeasureReadBandwidth(pool);
  const ComputeProbe peak = MeasureComputePeak(pool);

  // First start: makes sure the packed-weight cache file exists (building it if needed).
  Stopwatch clock;
  std::optional<LoadedModel> loaded = LoadModel(dir, options);
  const double first_load = clock.Millis();
  const std::string first_source = PackedCacheSourceName(loaded->model->packed_weights().source());
  SetBudgets(flags, loaded->settings, &request);
  std::vector<std::string> files = FolderFiles(dir);
  if (!loaded->model->packed_weights().path().empty()) {
    files.push_back(loaded->model->packed_weights().path());
  }
  loaded.reset();

  // Cold start: the folder's files and the cache file evicted from the page cache (as
  // far as the kernel lets an unprivileged process; the fraction left is reported).
  for (const std::string& f : files) DropFromPageCache(f);
  double bytes = 0, resident = 0;
  for (const std::string& f : files) {
    const double size = static_cast<double>(std::filesystem::file_size(f));
    bytes += size;
    resident += size * ResidentFraction(f);
  }
  const double cached_before_cold = bytes > 0 ? resident / bytes : 0.0;
  clock.Reset();
  loaded = LoadModel(dir, options);
  const double load_cold = clock.Millis();
  loaded.reset();
  clock.Reset();
  loaded = LoadModel(dir, options);
  const double load_warm = clock.Millis();

  RequestShape shape;
  std::vector<RunTimes> runs;
  for (int r = 0; r <= flags.runs; ++r) {
    const RunTimes t = RunBenchRequest(*loaded, request, pool, &shape);
    if (r > 0) runs.push_back(t);  // run 0 warms the caches up
  }
  // Neighbours on a shared host move the bandwidth by tens of percent within a minute:
  // probe again after the runs (peak RSS taken first, the probe's buffer is large) and
  // take the better figure as the bound.
  const double peak_rss_mib = PeakRssMiB();
  const BandwidthProbe bw_after = MeasureReadBandwidth(pool);
  const double bandwidth = std::max(bw.gb_per_s, bw_after.gb_per_s);
  auto median = [&](double RunTimes::*field) {
    std::vector<double> v;
    for (const RunTimes& t : runs) v.push_back(t.*field);
    return Median(v);
  };
  const double preprocess = median(&RunTimes::preprocess), vision = median(&RunTimes::vision),
               prefill = median(&RunTimes::prefill), decode = median(&RunTimes::decode),
               ttft = median(&RunTimes::ttft), total = median(&RunTimes::total),
               video_read = median(&RunTimes::video_read),
               video_resize = median(&RunTimes::video_resize),
               video_encode = median(&RunTimes::video_encode);
  const double prefill_tok_s = shape.prompt_tokens / (prefill / 1e3);
  const double decode_tok_s = flags.tokens > 1 ? (flags.tokens - 1) / (decode / 1e3) : 0.0;
  // Bytes a decode step reads: the weight matrices plus, on average over the generated
  // tokens, the KV cache (keys and values of every layer).
  const TextConfig& tc = loaded->model->config().text;
  const double kv_per_token =
      static_cast<double>(KvPool::PageBytes(tc, loaded->model->options().kv_dtype, 1));
  const double step_bytes = static_cast<double>(loaded->model->text().weight_bytes()) +
                            kv_per_token * (shape.prompt_tokens + flags.tokens / 2.0);
  const double bound_tok_s = bandwidth * 1e9 / step_bytes;

  nlohmann::ordered_json j;
  const std::string dtype = DtypeName(options.text_weights);
  const std::string vision_dtype = DtypeName(options.vision_weights);
  j["model"] = flags.model.model;
  j["qvl_build"] = BuildInfo();
  j["measured_at"] = UtcNow();
  j["dtype"] = dtype;
  j["vision_dtype"] = vision_dtype;
  j["kv_cache_type"] = KvCacheTypeName(options.kv_dtype);
  j["threads"] = pool.size();
  j["kernel_tier"] = CpuTierName(ActiveTier());
  j["cpu"] = DescribeCpu();
  const ImageGrid& first = shape.first_image;
  j["image"] = flags.images.empty() ? "" : flags.images[0];
  j["images"] = flags.images.size();
  j["image_size"] = {first.width, first.height};
  j["resized_size"] = {first.resized_width, first.resized_height};
  j["image_tokens"] = shape.image_tokens;
  const ImageGrid& v = shape.video;
  if (request.video) {
    j["video"] = request.video->name;
    j["video_frame_list"] = !request.video->frames.empty();
    j["max_video_tokens"] = flags.max_video_tokens;
    j["video_size"] = {v.width, v.height};
    j["video_frames"] = v.frames;
    j["video_fps"] = v.fps;
    j["video_decoded_frames"] = v.decoded_frames;
    j["video_sampled_frames"] = v.sampled_frames;
    j["video_resized_size"] = {v.resized_width, v.resized_height};
    j["video_grid_thw"] = {v.grid_t, v.grid_h, v.grid_w};
    j["video_tokens"] = shape.video_tokens;
    j["video_demux_decode_ms"] = video_read;
    j["video_sample_resize_patches_ms"] = video_resize;
    j["video_encode_ms"] = video_encode;
  }
  j["prompt_tokens"] = shape.prompt_tokens;
  j["generated_tokens"] = flags.tokens;
  j["runs"] = flags.runs;
  j["preprocess_ms"] = preprocess;
  j["vision_encode_ms"] = vision;
  j["prefill_ms"] = prefill;
  j["prefill_tok_s"] = prefill_tok_s;
  j["time_to_first_token_ms"] = ttft;
  j["decode_ms"] = decode;
  j["decode_tok_s"] = decode_tok_s;
  j["total_ms"] = total;
  j["start_to_done_ms"] = load_warm + total;
  j["first_load_ms"] = first_load;
  j["first_load_packed_weights"] = first_source;
  j["load_cold_ms"] = load_cold;
  j["load_warm_ms"] = load_warm;
  j["page_cache_before_cold_load"] = cached_before_cold;
  j["peak_rss_mib"] = peak_rss_mib;
  j["memory_bandwidth_gb_s"] = bandwidth;
  j["memory_bandwidth_probes_gb_s"] = {bw.gb_per_s, bw_after.gb_per_s};
  j["compute_peak"] = {
      {"unit", peak.unit}, {"int8_tops", peak.int8_tops}, {"bf16_tflops", peak.bf16_tflops}};
  j["decode_bytes_per_token"] = step_bytes;
  j["decode_bound_tok_s"] = bound_tok_s;
  j["decode_percent_of_bound"] = 100.0 * decode_tok_s / bound_tok_s;
  std::optional<BenchComparison> comparison;
  if (baseline) {
    CheckSameRequest(*baseline, j);
    comparison = CompareBench(*baseline, j, flags.max_slowdown_percent);
    j["baseline"] = ComparisonJson(*comparison);
  }
  const int exit_code = comparison && comparison->Regressed() ? kRegressionExitCode : 0;
  if (exit_code != 0) {
    std::fprintf(stderr, "qvl bench: worse than the baseline %s: %s\n", flags.baseline.c_str(),
                 RegressionSummary(*comparison).c_str());
  }
  if (flags.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return exit_code;
  }
  std::printf("qvl bench: %s, weights %s (vision %s), %d thread%s, kernels %s\n",
              flags.model.model.c_str(), dtype.c_str(), vision_dtype.c_str(), pool.size(),
              pool.size() == 1 ? "" : "s", CpuTierName(ActiveTier()));
  std::string what;
  if (!flags.images.empty()) {
    what = StrCat(flags.images.size() == 1
                      ? flags.images[0]
                      : StrCat(flags.images.size(), " images like ", flags.images[0]),
                  " ", first.width, "x", first.height, " -> ", first.resized_width, "x",
                  first.resized_height, ", ");
  }
  if (request.video) {
    what += StrCat(request.video->frames.empty() ? "video " : "frames of a video from ",
                   request.video->name, " ", v.width, "x", v.height, ", ", v.frames, " frames at ",
                   v.fps, " fps -> ", v.sampled_frames, " sampled at ", v.resized_width, "x",
                   v.resized_height, ", ");
  }
  std::printf(
      "request: %s%lld prompt tokens (%lld image, %lld video), %d generated, median of %d runs\n",
      what.c_str(), static_cast<long long>(shape.prompt_tokens),
      static_cast<long long>(shape.image_tokens), static_cast<long long>(shape.video_tokens),
      flags.tokens, flags.runs);
  std::printf("  %-28s %10.1f ms\n", "preprocess", preprocess);
  if (request.video) {
    std::printf("  %-28s %10.1f ms  (%lld frames decoded, %lld sampled)\n",
                "  video demux + decode", video_read, static_cast<long long>(v.decoded_frames),
                static_cast<long long>(v.sampled_frames));
    std::printf("  %-28s %10.1f ms\n", "  video sample/resize/patch", video_resize);
  }
  std::printf("  %-28s %10.1f ms\n", "vision encode", vision);
  if (request.video) std::printf("  %-28s %10.1f ms\n", "  of the video", video_encode);
  std::printf("  %-28s %10.1f ms  (%.1f tok/s)\n", "prefill", prefill, prefill_tok_s);
  std::printf("  %-28s %10.1f ms\n", "time to first token", ttft);
  std::printf("  %-28s %10.1f ms  (%.2f tok/s, %.0f%% of the %.1f tok/s bound)\n", "decode", decode,
              decode_tok_s, 100.0 * decode_tok_s / bound_tok_s, bound_tok_s);
  std::printf("  %-28s %10.1f ms\n", "total", total);
  std::printf("  %-28s %10.1f ms  (packed weights %s)\n", "load, first", first_load,
              first_source.c_str());
  std::printf("  %-28s %10.1f ms  (%.0f%% of the files were cached before)\n", "load, cold",
              load_cold, 100.0 * cached_before_cold);
  std::printf("  %-28s %10.1f ms\n", "load, warm", load_warm);
  std::printf("  %-28s %10.1f ms\n", "warm start to last token", load_warm + total);
  std::printf("  %-28s %10.1f MiB\n", "peak RSS", peak_rss_mib);
  std::printf(
      "  %-28s %10.1f GB/s  (probes before and after: %.1f, %.1f; %.2f GB read per "
      "decode step)\n",
      "memory read bandwidth", bandwidth, bw.gb_per_s, bw_after.gb_per_s, step_bytes / 1e9);
  if (*peak.unit != '\0') {
    std::printf("  %-28s %10.2f TOP/s int8, %.2f TFLOP/s bf16 (%s, register-only loops)\n",
                "compute peak", peak.int8_tops, peak.bf16_tflops, peak.unit);
  }
  if (comparison) std::printf("%s", FormatComparison(*comparison).c_str());
  return exit_code;
}

}  // namespace

void AddBenchVerb(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Standard speed report: image and video encode, prefill, decode, load time, memory");
  flags->model.AddTo(cmd);
  cmd->add_option("--image", flags->images,
                  "Image file of the request (repeat for several; none: text only)");
  cmd->add_option("--video", flags->video, "Video file of the request, after the images");
  cmd->add_option("--video-frames", flags->video_frames,
                  "Or a video as its frames (image files, in order), shown at --video-fps");
  cmd->add_option("--video-fps", flags->video_fps, "Frame rate of --video-frames")
      ->capture_default_str();
  cmd->add_option("--max-image-tokens", flags->max_image_tokens,
                  "Image budget in tokens per image (default: the model's)");
  cmd->add_option("--max-video-tokens", flags->max_video_tokens,
                  "Video budget in tokens over all sampled frames, a token being a frame pair "
                  "of 32x32 pixels; 0 = the model's")
      ->capture_default_str();
  cmd->add_option("--prompt", flags->prompt,
                  "User prompt (default: \"Describe this image.\", or \"video\" with one)");
  cmd->add_option("--tokens", flags->tokens, "Tokens to generate (EOS ignored)")
      ->capture_default_str();
  cmd->add_option("--runs", flags->runs, "Timed runs after the warm-up (medians reported)")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "Print JSON instead of the table");
  cmd->add_option("--baseline", flags->baseline,
                  "An earlier report (--json saved to a file) to compare with: exit status 3 "
                  "when a stage is worse than --max-slowdown allows");
  cmd->add_option("--max-slowdown", flags->max_slowdown_percent,
                  "Percent a stage may be slower (decode: per token; peak RSS: larger) than "
                  "the baseline")
      ->check(InRange(kMaxSlowdownRange))
      ->capture_default_str();
  cmd->callback([flags] { SetExitCode(RunBench(*flags)); });
}

}  // namespace qvl::cli
