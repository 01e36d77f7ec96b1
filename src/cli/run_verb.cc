// qvl run -m MODEL [-i IMAGE]... "PROMPT": one answer in the terminal, streamed as it is
// generated, through the same engine the server uses. --request takes an OpenAI-style
// chat request instead; --json prints the OpenAI response object with usage and timings.
// A Thinking model's reasoning is shown apart from its reply (AnswerPrinter). Without a
// prompt, a question piped on stdin is answered, and at a terminal a chat opens
// (chat_repl.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/field_error.h"
#include "base/timer.h"
#include "base/trim_space.h"
#include "cli/chat_repl.h"
#include "cli/flag_ranges.h"
#include "cli/media_files.h"
#include "cli/model_check.h"
#include "cli/model_flags.h"
#include "cli/terminal_answer.h"
#include "cli/verbs.h"
#include "engine/draft_lookup.h"
#include "engine/engine.h"
#include "engine/request_preparer.h"
#include "engine/request_ranges.h"
#include "engine/video_budget_policy.h"
#include "image/image_limits.h"
#include "model/kv_pool.h"
#include "server/body_limit.h"
#include "server/chat_request.h"
#include "server/engine_limits.h"
#include "server/generation_fields.h"
#include "server/request_fields.h"

namespace qvl::cli {
namespace {

struct RunFlags {
  ModelFlags model;
  std::vector<std::string> images;
  std::vector<std::string> videos;
  std::string prompt;
  std::string system;
  std::string request;
  bool json = false;
  bool quiet = false;
  bool hide_thinking = false;
  std::optional<int> max_tokens;
  std::optional<int> thinking_budget;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  SamplingParams sampling;
  std::optional<int64_t> seed;  // as the API's seed: any int64, taken as its 64 bits
  int64_t min_pixels = 0, max_pixels = 0;
  int64_t min_video_tokens = 0, max_video_tokens = 0;
  int64_t context = 16384;
  int draft_tokens = EngineOptions().draft_tokens;
};

// The input files, read before the model loads: a wrong path or an oversized file is
// refused in milliseconds, not after the load, and never read whole first.
struct RunInputs {
  std::vector<std::string> images;
  std::vector<std::string> videos;
  std::string request;
};

// --stop as the API checks its "stop": how many strings, none empty or too long.
void CheckStopFlags(const std::vector<std::string>& stop) {
  if (stop.empty()) return;
  const nlohmann::json body = {{"stop", stop}};
  std::vector<std::string> checked;
  try {
    ParseStopField(RequestObject(body, ""), ChatRequestPolicy().max_stop_strings, &checked);
  } catch (const FieldError& e) {
    const std::string message = e.what();
    Fail(ErrorCode::kInvalidArgument, "--stop: ", message.substr(e.field().size() + 2));
  }
}

void CheckArguments(const RunFlags& f) {
  if (!f.request.empty() && (!f.images.empty() || !f.videos.empty() || !f.prompt.empty())) {
    Fail(ErrorCode::kInvalidArgument,
         "give either --request or a prompt with -i images / -v videos, not both");
  }
  if (!f.request.empty() && !f.system.empty()) {
    Fail(ErrorCode::kInvalidArgument,
         "give either --request or --system, not both: put the system message in the request");
  }
  if (f.max_tokens && *f.max_tokens >= f.context) {
    Fail(ErrorCode::kInvalidArgument, "--max-tokens (", *f.max_tokens,
         ") must be below --ctx-size (", f.context, "): the prompt and the answer share it");
  }
  if (f.min_pixels > 0 && f.max_pixels > 0 && f.min_pixels > f.max_pixels) {
    Fail(ErrorCode::kInvalidArgument, "--min-pixels (", f.min_pixels,
         ") is larger than --max-pixels (", f.max_pixels, ")");
  }
  CheckStopFlags(f.stop);
}

RunInputs ReadInputs(const RunFlags& f, const EngineOptions& options) {
  RunInputs in;
  if (!f.request.empty())
    in.request = ReadInputFile("--request", f.request, DefaultMaxBodyBytes(options));
  for (const std::string& path : f.images) in.images.push_back(ReadImageFile("-i", path, options));
  for (const std::string& path : f.videos) in.videos.push_back(ReadVideoFile("-v", path, options));
  return in;
}

// A question piped on stdin (`echo "..." | qvl run -m M -i photo.jpg`), at most as long as
// the server takes a request body.
std::string ReadPromptFromStdin(const EngineOptions& options) {
  const uint64_t max_bytes = DefaultMaxBodyBytes(options);
  std::string prompt;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), stdin)) > 0) {
    prompt.append(buffer, n);
    if (prompt.size() > max_bytes) {
      Fail(ErrorCode::kInvalidArgument, "the prompt on stdin is over ", max_bytes,
           " bytes; give a shorter one");
    }
  }
  if (TrimSpace(prompt).empty()) {
    Fail(ErrorCode::kInvalidArgument,
         "no prompt: give one, pipe it on stdin, run at a terminal for a chat, or give "
         "--request FILE");
  }
  return std::string(TrimSpace(prompt));
}

GenerationRequest BuildRequest(const RunFlags& f, const RunInputs& in, const std::string& prompt,
                               const Engine& engine) {
  if (!f.request.empty()) {
    ChatRequestPolicy policy;
    TakeEngineLimits(engine, &policy);
    policy.media.local.enabled = true;
    policy.media.local.base_dir = std::filesystem::absolute(f.request).parent_path();
    GenerationRequest r = ParseChatRequest(in.request, policy).generation;
    // The engine's own message names `qvl serve --parallel`, which run does not have.
    if (r.n > engine.options().max_sequences) {
      Fail(ErrorCode::kInvalidArgument, f.request, ": n is ", r.n, "; qvl run gives at most ",
           engine.options().max_sequences, " answers to one request");
    }
    return r;
  }
  GenerationRequest r;
  if (!f.system.empty())
    r.messages.push_back({"system", {{ChatPart::Kind::kText, f.system}}, true, {}, {}});
  ChatMessage user{"user", {}, false, {}, {}};
  for (size_t i = 0; i < f.images.size(); ++i) {
    const std::string& bytes = in.images[i];
    r.images.push_back({f.images[i], {bytes.begin(), bytes.end()}, "", ImageDetail::kAuto});
    user.parts.push_back({ChatPart::Kind::kImage, ""});
  }
  for (size_t i = 0; i < f.videos.size(); ++i) {
    VideoInput video;
    video.name = f.videos[i];
    video.file.assign(in.videos[i].begin(), in.videos[i].end());
    r.videos.push_back(std::move(video));
    user.parts.push_back({ChatPart::Kind::kVideo, ""});
  }
  user.parts.push_back({ChatPart::Kind::kText, prompt});
  r.messages.push_back(std::move(user));
  return r;
}

void ApplyFlags(const RunFlags& f, GenerationRequest* r) {
  auto set = [](auto& field, const auto& value) {
    if (value.has_value()) field = value;
  };
  set(r->sampling.temperature, f.sampling.temperature);
  set(r->sampling.top_p, f.sampling.top_p);
  set(r->sampling.top_k, f.sampling.top_k);
  set(r->sampling.min_p, f.sampling.min_p);
  set(r->sampling.repetition_penalty, f.sampling.repetition_penalty);
  set(r->sampling.presence_penalty, f.sampling.presence_penalty);
  set(r->sampling.frequency_penalty, f.sampling.frequency_penalty);
  if (f.seed) r->sampling.seed = static_cast<uint64_t>(*f.seed);
  if (f.max_tokens) {
    r->max_tokens = *f.max_tokens;
    r->max_tokens_field = "--max-tokens";
  }
  if (f.thinking_budget) r->reasoning_budget = *f.thinking_budget;
  if (!f.stop.empty()) r->stop = f.stop;
  if (f.ignore_eos) r->ignore_eos = true;
  if (f.min_pixels > 0) r->image_budget.min_pixels = f.min_pixels;
  if (f.max_pixels > 0) r->image_budget.max_pixels = f.max_pixels;
}

// The video budget flags are the server's defaults of this one run; the limit follows
// them, so that what the flags ask is what the clip gets.
void ApplyVideoBudgetFlags(const RunFlags& f, EngineOptions* options) {
  options->min_video_tokens = f.min_video_tokens;
  options->max_video_tokens = f.max_video_tokens;
  options->video_token_limit = std::max(f.max_video_tokens, kDefaultVideoTokenLimit);
}

void Run(const RunFlags& f) {
  CheckArguments(f);
  EngineOptions options;
  options.threads = f.model.Threads();
  // One answer, or the n of a --request, at once.
  options.max_sequences = EngineOptions().max_sequences;
  options.context_tokens = f.context;
  options.draft_tokens = f.draft_tokens;
  ApplyVideoBudgetFlags(f, &options);
  const bool chat = f.request.empty() && f.prompt.empty() && ::isatty(STDIN_FILENO);
  if (chat && f.json) {
    Fail(ErrorCode::kInvalidArgument,
         "--json prints one answer: give a prompt or --request FILE, not a chat");
  }
  const std::string prompt =
      f.request.empty() && f.prompt.empty() && !chat ? ReadPromptFromStdin(options) : f.prompt;
  const RunInputs inputs = ReadInputs(f, options);
  const std::string dir = f.model.ResolveFolder();
  // The headers first, as serve does: a folder at fault is named before the weights load.
  const CheckedModelFolder checked = CheckModelFolder(dir);
  CheckEngineOptions(options, checked.preprocessor.image);
  if (chat) KeepInterruptsForChat();
  Stopwatch load;
  std::unique_ptr<Qwen3VLModel> model = Qwen3VLModel::Load(dir, f.model.Options());
  // Room for one whole context (a chat grows to it), where serve's --kv-cache-mb default
  // holds 9360 tokens of the 2B model: the pool is mapped, not touched, until used.
  const int64_t pages = (f.context + options.kv_page_tokens - 1) / options.kv_page_tokens;
  options.kv_cache_bytes = std::max(
      options.kv_cache_bytes, static_cast<size_t>(pages) *
                                  KvPool::PageBytes(model->config().text, model->options().kv_dtype,
                                                    options.kv_page_tokens));
  Engine engine(std::move(model), options);
  const AnswerDisplay display{.model = f.model.model,
                              .json = f.json,
                              .quiet = f.quiet,
                              .hide_thinking = f.hide_thinking,
                              .load_ms = load.Millis()};
  if (chat) {
    ChatOptions chat_options{.display = display,
                             .system = f.system,
                             .media = {},
                             .apply_flags = [&f](GenerationRequest* r) { ApplyFlags(f, r); }};
    for (size_t i = 0; i < f.images.size(); ++i)
      chat_options.media.push_back({f.images[i], inputs.images[i], false});
    for (size_t i = 0; i < f.videos.size(); ++i)
      chat_options.media.push_back({f.videos[i], inputs.videos[i], true});
    RunChat(engine, chat_options);
    return;
  }
  GenerationRequest request = BuildRequest(f, inputs, prompt, engine);
  ApplyFlags(f, &request);
  const TerminalAnswer answer = AnswerInTerminal(engine, std::move(request), display, nullptr);
  if (answer.last.finish_reason == FinishReason::kError)
    Fail(answer.last.error_code, answer.last.error);
}

}  // namespace

void AddRunVerb(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* verb = app.add_subcommand(
      "run",
      "Answer a prompt about images and videos, streamed to the terminal; without one, a "
      "question piped on stdin, or at a terminal a chat with follow-ups");
  f->model.AddTo(verb);
  verb->add_option("prompt", f->prompt,
                   "the question or instruction (none: read stdin, or chat at a terminal)");
  verb->add_option("-v,--video", f->videos,
                   "a video file: MP4, WebM, MOV, MKV, AVI, ... (repeat for several)")
      ->allow_extra_args(false);
  verb->add_option("-i,--image", f->images, "an image file (repeat for several)")
      ->allow_extra_args(false);
  verb->add_option("--system", f->system, "system prompt (a chat's too)");
  verb->add_option("--request", f->request, "an OpenAI-style chat request (JSON file) instead");
  verb->add_flag("--json", f->json, "print the OpenAI response object instead of streaming text");
  verb->add_flag("-q,--quiet", f->quiet, "no timing line (nor thinking marks) on stderr");
  verb->add_flag("--hide-thinking", f->hide_thinking,
                 "a Thinking model: print only the reply, not the reasoning before it (stderr "
                 "marks where it starts and ends)");
  namespace ranges = request_ranges;
  verb->add_option("-n,--max-tokens", f->max_tokens,
                   "most tokens to generate (default 2048, cut to what the context leaves)")
      ->check(InRange(ranges::kMaxTokens));
  verb->add_option("--thinking-budget", f->thinking_budget,
                   "a Thinking model: at most this many tokens of reasoning, then it answers "
                   "(as the API's thinking_token_budget)")
      ->check(InRange(ranges::kThinkingTokenBudget));
  verb->add_option("--stop", f->stop,
                   "stop string (repeat for several, at most " +
                       std::to_string(ChatRequestPolicy().max_stop_strings) + ")")
      ->allow_extra_args(false);
  verb->add_flag("--ignore-eos", f->ignore_eos, "keep generating past end-of-sequence");
  verb->add_option("--temperature", f->sampling.temperature,
                   "0 = greedy (default: generation_config.json)")
      ->check(InRange(ranges::kTemperature));
  verb->add_option("--top-p", f->sampling.top_p, "nucleus sampling")->check(InRange(ranges::kTopP));
  verb->add_option("--top-k", f->sampling.top_k, "top-k sampling, 0 = off")
      ->check(InRange(ranges::kTopK));
  verb->add_option("--min-p", f->sampling.min_p, "min-p sampling")->check(InRange(ranges::kMinP));
  verb->add_option("--repetition-penalty", f->sampling.repetition_penalty, "HF repetition penalty")
      ->check(InRange(ranges::kRepetitionPenalty));
  verb->add_option("--presence-penalty", f->sampling.presence_penalty, "OpenAI presence penalty")
      ->check(InRange(ranges::kPresencePenalty));
  verb->add_option("--frequency-penalty", f->sampling.frequency_penalty, "OpenAI frequency penalty")
      ->check(InRange(ranges::kFrequencyPenalty));
  verb->add_option("--seed", f->seed, "random seed for reproducible sampling (as the API's seed)")
      ->check(IntegerIn(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  verb->add_option("--min-pixels", f->min_pixels, "smallest image area after resizing")
      ->check(CLI::Range(int64_t{0}, kMaxPixelBudget));
  verb->add_option("--max-pixels", f->max_pixels, "largest image area after resizing")
      ->check(CLI::Range(int64_t{0}, kMaxPixelBudget));
  verb->add_option("--min-video-tokens", f->min_video_tokens,
                   "smallest video budget, in video tokens over all frames (default: the "
                   "model's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("--max-video-tokens", f->max_video_tokens,
                   "a video's budget in video tokens (a frame pair of 32x32 pixels) over all "
                   "frames (default 2048)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  verb->add_option("-c,--ctx-size", f->context, "context: prompt + answer tokens")
      ->check(InRange(kContextTokens))
      ->capture_default_str();
  verb->add_option("--draft-tokens", f->draft_tokens,
                   "speculative decoding: tokens per step guessed from the prompt and answer "
                   "so far (answers unchanged); 0 = off")
      ->check(CLI::Range(0, kMaxDraftTokens))
      ->capture_default_str();
  verb->callback([f] {
    Run(*f);
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
