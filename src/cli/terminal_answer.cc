#include "cli/terminal_answer.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string_view>

#include "base/process_memory.h"
#include "cli/answer_printer.h"
#include "server/completion_encoder.h"
#include "server/openai_format.h"

namespace qvl::cli {
namespace {

// Dim is for a person at a terminal: never in a pipe or a file, nor where NO_COLOR
// (no-color.org) or TERM=dumb asks for plain text.
bool StdoutTakesColor() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb");
}

}  // namespace

TerminalAnswer AnswerInTerminal(Engine& engine, GenerationRequest request,
                                const AnswerDisplay& display,
                                const std::function<bool()>& stop_requested) {
  const bool thinking = SplitsReasoning(engine, request);
  // The reasoning goes to stdout, as `ollama run` prints it: what the model wrote, in
  // order, and a pipe gets the same text as the terminal; --hide-thinking leaves the reply.
  AnswerPrinter printer({.split_reasoning = thinking,
                         .hide_reasoning = display.hide_thinking,
                         .dim_reasoning = StdoutTakesColor()},
                        stdout, display.quiet ? nullptr : stderr);
  // --json: the response object the server would send (reasoning_content apart).
  CompletionEncoder encoder(
      {NewCompletionId(), static_cast<int64_t>(std::time(nullptr)), display.model},
      {.split_reasoning = thinking});
  std::string json;

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  TerminalAnswer answer;
  // Only the first answer is shown; a --request with n > 1 still waits for every one.
  int unfinished = request.n;
  const RequestId id = engine.Submit(std::move(request), [&](GenerationUpdate&& u) {
    if (u.choice != 0) {
      std::lock_guard<std::mutex> lock(mu);
      if (u.finished && --unfinished == 0) {
        done = true;
        cv.notify_all();
      }
      return;
    }
    answer.text += u.text;
    if (display.json) {
      json += encoder.Encode(GenerationUpdate(u));
    } else {
      printer.Print(u.text);
    }
    std::lock_guard<std::mutex> lock(mu);
    if (u.finished) {
      answer.last = std::move(u);
      done = --unfinished == 0;
      cv.notify_all();
    }
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    bool cancelled = false;
    while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (!cancelled && stop_requested && stop_requested()) {
        cancelled = true;
        lock.unlock();
        engine.Cancel(id);
        lock.lock();
      }
    }
  }
  if (!display.json) printer.Finish();
  const GenerationUpdate& last = answer.last;
  if (last.finish_reason == FinishReason::kError) return answer;
  if (display.json) {
    std::printf("%s\n", json.c_str());
  } else {
    std::printf("\n");
  }
  std::fflush(stdout);
  if (!display.json && printer.still_reasoning() && last.finish_reason == FinishReason::kLength) {
    std::fprintf(stderr,
                 "qvl: the answer reached its token limit while the model was still thinking, "
                 "so there is no reply; raise --max-tokens (-n)\n");
  }
  if (!display.quiet) PrintTimings(last, thinking, display.load_ms);
  return answer;
}

void PrintTimings(const GenerationUpdate& last, bool thinking, double load_ms) {
  const Timings& t = last.timings;
  int64_t image_tokens = 0, video_tokens = 0;
  for (const ImageGrid& g : t.images) image_tokens += g.tokens;
  for (const ImageGrid& g : t.videos) video_tokens += g.tokens;
  std::string visual = std::to_string(image_tokens) + " image";
  if (!t.videos.empty()) visual += ", " + std::to_string(video_tokens) + " video";
  const std::string reasoning =
      thinking ? " (" + std::to_string(last.usage.reasoning_tokens) + " thinking)" : "";
  std::string load;
  if (load_ms >= 0) {
    char text[32];
    std::snprintf(text, sizeof(text), "load %.0f ms | ", load_ms);
    load = text;
  }
  std::fprintf(stderr,
               "[%sprompt %lld tokens (%s) | preprocess %.0f ms | vision %.0f ms | prefill %.0f "
               "ms (%.1f tok/s) | first token %.0f ms | %lld tokens%s, %.2f tok/s, %lld of %lld "
               "drafted kept | peak RSS %.2f GiB]\n",
               load.c_str(), static_cast<long long>(last.usage.prompt_tokens), visual.c_str(),
               t.preprocess_ms, t.vision_ms, t.prefill_ms, t.prefill_tokens_per_s, t.ttft_ms,
               static_cast<long long>(last.usage.completion_tokens), reasoning.c_str(),
               t.decode_tokens_per_s, static_cast<long long>(t.draft_tokens_accepted),
               static_cast<long long>(t.draft_tokens), PeakRssBytes() / double(1 << 30));
  for (size_t i = 0; i < t.images.size(); ++i) {
    const ImageGrid& g = t.images[i];
    std::fprintf(stderr,
                 "[image %zu: %lldx%lld -> %lldx%lld, %lld tokens | decode %.0f ms | encode "
                 "%.0f ms%s]\n",
                 i + 1, static_cast<long long>(g.width), static_cast<long long>(g.height),
                 static_cast<long long>(g.resized_width), static_cast<long long>(g.resized_height),
                 static_cast<long long>(g.tokens), g.decode_ms, g.encode_ms,
                 g.cached ? " (cached)" : "");
  }
  for (size_t i = 0; i < t.videos.size(); ++i) {
    const ImageGrid& g = t.videos[i];
    std::fprintf(stderr,
                 "[video %zu: %lld frames at %.3g fps, %lld decoded, %lld sampled, %lldx%lld -> "
                 "%lldx%lld, grid %lldx%lldx%lld, %lld tokens | decode %.0f ms | encode %.0f "
                 "ms%s]\n",
                 i + 1, static_cast<long long>(g.frames), g.fps,
                 static_cast<long long>(g.decoded_frames), static_cast<long long>(g.sampled_frames),
                 static_cast<long long>(g.width), static_cast<long long>(g.height),
                 static_cast<long long>(g.resized_width), static_cast<long long>(g.resized_height),
                 static_cast<long long>(g.grid_t), static_cast<long long>(g.grid_h),
                 static_cast<long long>(g.grid_w), static_cast<long long>(g.tokens), g.decode_ms,
                 g.encode_ms, g.cached ? " (cached)" : "");
  }
}

}  // namespace qvl::cli
