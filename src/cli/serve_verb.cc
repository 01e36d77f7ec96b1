// qvl serve -m MODEL: the OpenAI-compatible HTTP server with the web page. It listens at
// once and loads the model in the background (/health answers 503 until it is ready);
// SIGINT/SIGTERM stop it gracefully: no new work, requests in flight get
// --shutdown-grace seconds, exit 0.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/timer.h"
#include "cli/flag_ranges.h"
#include "cli/model_check.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "engine/draft_lookup.h"
#include "engine/engine.h"
#include "engine/image_budget_policy.h"
#include "engine/request_preparer.h"
#include "engine/request_ranges.h"
#include "engine/video_budget_policy.h"
#include "hub/model_resolver.h"
#include "image/image_limits.h"
#include "model/dtype_words.h"
#include "model/qwen3vl.h"
#include "server/api_server.h"
#include "server/body_limit.h"
#include "server/malloc_tuning.h"

namespace qvl::cli {
namespace {

struct ServeFlags {
  ModelFlags model;
  std::vector<std::string> aliases;
  ApiServerOptions server;
  EngineOptions engine;
  int64_t kv_cache_mb = 1024;
  int64_t image_cache_mb = 256;
  std::optional<int> max_tokens;
  int64_t max_image_mb = static_cast<int64_t>(EngineOptions().max_image_bytes >> 20);
  int64_t max_video_mb = VideoLimits().max_encoded_bytes >> 20;
  int64_t max_body_mb = 0;
  int64_t response_store_mb = static_cast<int64_t>(ResponseStoreOptions().max_bytes >> 20);
  int image_url_timeout = 10;
  double shutdown_grace = 10;
  int64_t max_stall_ms = 2000;
  std::string log_format = "text";
  SharedCacheOptions redis;
  int64_t redis_timeout_ms = 300;
};

void Finish(ServeFlags& f) {
  const std::string id = hub::ServedModelId(f.model.model);
  f.engine.threads = f.model.Threads();
  f.server.model_names = {id};
  for (const std::string& alias : f.aliases) {
    if (alias != id) f.server.model_names.push_back(alias);
  }
  f.engine.max_stall_seconds = static_cast<double>(f.max_stall_ms) / 1e3;
  f.engine.kv_cache_bytes = static_cast<size_t>(f.kv_cache_mb) << 20;
  f.engine.image_cache_bytes = static_cast<size_t>(f.image_cache_mb) << 20;
  f.engine.max_image_bytes = static_cast<size_t>(f.max_image_mb) << 20;
  f.engine.video_limits.max_encoded_bytes = f.max_video_mb << 20;
  f.server.response_store.max_bytes = static_cast<size_t>(f.response_store_mb) << 20;
  if (f.server.host.empty()) {
    Fail(ErrorCode::kInvalidArgument,
         "--host is empty: give 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)");
  }
  if (f.max_tokens) {
    if (*f.max_tokens >= f.engine.context_tokens) {
      Fail(ErrorCode::kInvalidArgument, "--max-tokens (", *f.max_tokens,
           ") must be below --ctx-size (", f.engine.context_tokens,
           "): the prompt and the answer share it");
    }
    f.engine.default_max_tokens = *f.max_tokens;
  }
  // The rest of the image budget needs the model's preprocessor config (checked before
  // listening when the model is on disk); flags that contradict each other are caught
  // here, in their own words.
  const int64_t max_image_tokens =
      f.engine.max_image_tokens > 0 ? f.engine.max_image_tokens : kDefaultMaxImageTokens;
  if (f.engine.min_image_tokens > 0 && f.engine.max_pixels == 0 &&
      f.engine.min_image_tokens > max_image_tokens) {
    Fail(ErrorCode::kInvalidArgument, "--min-image-tokens (", f.engine.min_image_tokens,
         ") is larger than --max-image-tokens (", max_image_tokens, ")");
  }
  if (f.engine.min_pixels > 0 && f.engine.max_pixels > 0 &&
      f.engine.min_pixels > f.engine.max_pixels) {
    Fail(ErrorCode::kInvalidArgument, "--min-pixels (", f.engine.min_pixels,
         ") is larger than --max-pixels (", f.engine.max_pixels, ")");
  }
  const int64_t max_video_tokens =
      f.engine.max_video_tokens > 0 ? f.engine.max_video_tokens : kDefaultMaxVideoTokens;
  if (f.engine.min_video_tokens > max_video_tokens) {
    Fail(ErrorCode::kInvalidArgument, "--min-video-tokens (", f.engine.min_video_tokens,
         ") is larger than --max-video-tokens (", max_video_tokens, ")");
  }
  if (!f.redis.url.empty()) {
    f.redis.timeout = std::chrono::milliseconds(f.redis_timeout_ms);
    f.redis.local_image_cache_bytes = f.engine.image_cache_bytes;
    f.server.shared_cache = std::make_shared<SharedCache>(f.redis);
  }
  ChatRequestPolicy& r = f.server.request;
  r.media.fetch.timeout_ms = f.image_url_timeout * 1000;
  r.media.local.enabled = !r.media.local.root.empty();
  if (r.media.local.enabled && !std::filesystem::is_directory(r.media.local.root)) {
    Fail(ErrorCode::kNotFound, "--allowed-local-media ", r.media.local.root, ": no such folder");
  }
  f.server.max_body_bytes = f.max_body_mb > 0
                                ? static_cast<size_t>(std::min<int64_t>(f.max_body_mb, 4096)) << 20
                                : DefaultMaxBodyBytes(f.engine);
  // Every stream holds an HTTP thread, queued ones too; a few more answer /health.
  if (f.server.http_threads <= 0) {
    f.server.http_threads = f.engine.max_sequences + f.engine.max_queue + 8;
  }
}

// Blocks SIGINT and SIGTERM in this thread and every thread started after it, so that
// the main thread alone takes them with sigtimedwait.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

void Serve(const ServeFlags& flags) {
  // Before listening, so that a wrong flag or a broken folder never looks like a server
  // that started: the weights' formats, and the folder's headers when it is on disk
  // already (a model still to be downloaded is checked as it loads).
  const ModelOptions model_options = flags.model.Options();
  const std::string local_dir = flags.model.ResolveLocalFolder();
  if (!local_dir.empty()) {
    const CheckedModelFolder checked = CheckModelFolder(local_dir);
    CheckEngineOptions(flags.engine, checked.preprocessor.image);
  }

  TuneMallocForServing();
  const sigset_t stop_signals = BlockStopSignals();
  ApiServer server(flags.server);
  server.Start();
  LogInfo("listening on http://", flags.server.host, ":", server.port(), " (loading ",
          flags.model.model, ")");

  std::atomic<bool> load_done{false};
  std::unique_ptr<Engine> engine;
  std::string load_error;
  std::thread loader([&] {
    try {
      const Stopwatch watch;
      const std::string dir = local_dir.empty() ? flags.model.ResolveFolder() : local_dir;
      EngineOptions engine_options = flags.engine;
      engine_options.on_idle = ReleaseFreeMemory;
      std::unique_ptr<Qwen3VLModel> model = Qwen3VLModel::Load(dir, model_options);
      if (flags.server.shared_cache) {
        engine_options.shared_encodings = flags.server.shared_cache->AttachModel(*model);
      }
      engine = std::make_unique<Engine>(std::move(model), engine_options);
      server.SetEngine(engine.get());
      LogInfo("ready: ", flags.server.model_names.front(), " from ", dir, " in ", watch.Seconds(),
              " s (KV cache ", KvCacheTypeName(model_options.kv_dtype), ", ",
              engine->Stats().kv_pages_total * engine_options.kv_page_tokens, " tokens)");
    } catch (const std::exception& e) {
      load_error = e.what();
    }
    load_done.store(true);
    // While the server waits for its first request: that request would otherwise take
    // the page faults of every mapped weight (0.2-0.4 s for the 2B model).
    if (engine) engine->model().packed_weights().Touch();
  });

  int signal_number = 0;
  while (signal_number <= 0 && !(load_done.load() && !load_error.empty())) {
    const timespec wait = {0, 200 * 1000 * 1000};
    signal_number = sigtimedwait(&stop_signals, nullptr, &wait);
  }
  if (signal_number > 0) {
    LogInfo("stopping (", signal_number == SIGINT ? "SIGINT" : "SIGTERM",
            "): ", flags.shutdown_grace, " s for requests in flight");
  }
  server.BeginShutdown();
  if (!load_done.load()) {
    // Nothing is in flight before the model is ready, and a download or weight packing
    // can take minutes: stop now.
    server.Stop(0);
    LogInfo("stopped while loading");
    std::_Exit(0);
  }
  loader.join();
  if (engine) engine->Shutdown(flags.shutdown_grace);
  server.Stop(2.0);
  engine.reset();
  if (!load_error.empty() && signal_number <= 0) {
    Fail(ErrorCode::kInvalidArgument, "cannot load the model: ", load_error);
  }
}

}  // namespace

void AddServeVerb(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* verb = app.add_subcommand("serve", "Serve the OpenAI-compatible API and web page");
  f->model.AddTo(verb);
  verb->add_option("--model-alias", f->aliases,
                   "other names clients may use for the model (e.g. Qwen/Qwen3-VL-2B-Instruct "
                   "when -m is a folder)")
      ->take_all();
  verb->add_option("--host", f->server.host, "address to listen on")
      ->capture_default_str()
      ->envname("QVL_HOST");
  verb->add_option("--port", f->server.port, "port (0 = any free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str()
      ->envname("QVL_PORT");
  verb->add_option("--api-key", f->server.api_key,
                   "require \"Authorization: Bearer KEY\" on every route but /health, /api/version "
                   "and the web page")
      ->envname("QVL_API_KEY");
  verb->add_option("--parallel", f->engine.max_sequences, "requests generating at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  verb->add_option("--queue", f->engine.max_queue, "requests waiting beyond that; more get 503")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  verb->add_option("--prefill-chunk", f->engine.prefill_chunk_tokens,
                   "prompt tokens per engine step")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  verb->add_option("--draft-tokens", f->engine.draft_tokens,
                   "speculative decoding: tokens per step guessed from the prompt and answer "
                   "so far and verified in the same pass (answers unchanged); 0 = off")
      ->check(CLI::Range(0, kMaxDraftTokens))
      ->capture_default_str();
  verb->add_option("--max-stall-ms", f->max_stall_ms,
                   "longest pause in a streaming answer while other requests' images and "
                   "prompts are processed; higher favours their time to first token")
      ->check(CLI::Range(0, 3600000))
      ->capture_default_str();
  verb->add_option("-c,--ctx-size", f->engine.context_tokens,
                   "tokens per request (prompt + answer)")
      ->check(InRange(kContextTokens))
      ->capture_default_str();
  verb->add_option("--max-tokens", f->max_tokens,
                   StrCat("answer length when a request sets none (default ",
                          EngineOptions().default_max_tokens, ", cut to what the context leaves)"))
      ->check(InRange(request_ranges::kMaxTokens));
  verb->add_option("--thinking-budget", f->engine.default_reasoning_budget,
                   "a Thinking model: at most this many tokens of reasoning when a request sets "
                   "no thinking_token_budget (or budget_tokens), then it answers; default none")
      ->check(InRange(request_ranges::kThinkingTokenBudget));
  verb->add_option("--kv-cache-mb", f->kv_cache_mb, "KV cache pool")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22))
      ->capture_default_str();
  verb->add_option("--image-cache-mb", f->image_cache_mb, "vision encodings kept for reuse")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 22))
      ->capture_default_str();
  verb->add_option("--min-pixels", f->engine.min_pixels,
                   "smallest image area after resizing (default: the model's)")
      ->check(CLI::Range(int64_t{0}, kMaxPixelBudget));
  verb->add_option("--max-pixels", f->engine.max_pixels,
                   "--max-image-tokens in pixels (default 1280 x 32 x 32)")
      ->check(CLI::Range(int64_t{0}, kMaxPixelBudget));
  verb->add_option("--min-image-tokens", f->engine.min_image_tokens,
                   "--min-pixels in image tokens (32x32)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--max-image-tokens", f->engine.max_image_tokens,
                   "an image's budget when its request sets none (default 1280)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--high-detail-image-tokens", f->engine.high_detail_image_tokens,
                   "what detail: high and a request's own maximum may reach (default 4096)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--min-video-tokens", f->engine.min_video_tokens,
                   "smallest video budget, in video tokens over all frames (a frame pair of "
                   "32x32 pixels; default: the model's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--max-video-tokens", f->engine.max_video_tokens,
                   "a video's budget when its request sets none, in video tokens over all "
                   "frames (default 2048)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--video-token-limit", f->engine.video_token_limit,
                   "what a request's own video budget may reach (default 8192)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--max-images", f->engine.max_images_per_request, "images per request")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  verb->add_option("--max-image-mb", f->max_image_mb, "encoded size per image")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  verb->add_option("--max-videos", f->engine.video_limits.max_videos_per_request,
                   "videos per request")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  verb->add_option("--max-video-mb", f->max_video_mb, "encoded size per video file")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  verb->add_option("--max-video-frames", f->engine.video_limits.max_input_frames,
                   "frames a clip may have before sampling (a file or a frame list)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24))
      ->capture_default_str();
  verb->add_option("--max-video-seconds", f->engine.video_limits.max_seconds, "length of a clip")
      ->check(InRange({"--max-video-seconds", 0, 86400, true}))
      ->capture_default_str();
  verb->add_option("--max-body-mb", f->max_body_mb,
                   "request body size (default: --max-images images and one video as base64, "
                   "and the text that fits the context)")
      ->check(CLI::Range(int64_t{0}, int64_t{4096}));
  verb->add_option("--response-store-mb", f->response_store_mb,
                   "memory for /v1/responses kept for previous_response_id (0 = keep none)")
      ->check(CLI::Range(int64_t{0}, int64_t{65536}))
      ->capture_default_str();
  verb->add_option("--allowed-local-media", f->server.request.media.local.root,
                   "let requests name image files under this folder");
  verb->add_flag("--allow-image-urls", f->server.request.media.allow_urls,
                 "let requests name http(s) image URLs, fetched by the server");
  verb->add_flag("--allow-private-image-urls",
                 f->server.request.media.fetch.allow_private_addresses,
                 "also fetch from loopback, private and link-local addresses");
  verb->add_option("--image-url-timeout", f->image_url_timeout,
                   "seconds an image or video URL may take to connect or stay silent; "
                   "the whole download gets 1 s more per MiB of its limit")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  verb->add_option("--timeout", f->server.io_timeout_seconds,
                   "seconds a client may stall one read or write")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  verb->add_option("--http-threads", f->server.http_threads,
                   "connections served at once (default: parallel + queue + 8)")
      ->check(CLI::Range(0, 4096));
  verb->add_option("--shutdown-grace", f->shutdown_grace,
                   "seconds requests in flight get on SIGINT/SIGTERM")
      ->check(InRange({"--shutdown-grace", 0, 86400}))
      ->capture_default_str();
  verb->add_option("--redis", f->redis.url,
                   "share image encodings and deterministic answers with other replicas "
                   "through this Redis: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]")
      ->envname("QVL_REDIS_URL");
  verb->add_option("--redis-password-file", f->redis.password_file,
                   "read the Redis password from this file (a Kubernetes Secret)");
  verb->add_option("--redis-prefix", f->redis.key_prefix, "prefix of every Redis key")
      ->capture_default_str();
  verb->add_option("--redis-timeout-ms", f->redis_timeout_ms,
                   "longest a lookup waits for Redis before computing locally")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  verb->add_option("--cors-origin", f->server.cors_origin, "Access-Control-Allow-Origin value")
      ->capture_default_str();
  verb->add_option("--log-format", f->log_format,
                   "text, or json: every log line (access lines too) as one JSON object")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  verb->callback([f] {
    SetLogFormat(f->log_format == "json" ? LogFormat::kJson : LogFormat::kText);
    Finish(*f);
    Serve(*f);
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
