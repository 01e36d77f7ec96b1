// `qvl pull [REPO]`: downloads a model into the Hugging Face cache (or --local-dir) and
// prints the model folder, ready for `qvl serve -m`.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/verbs.h"
#include "hub/model_puller.h"

namespace qvl::cli {
namespace {

// Ctrl-C stops the transfers cleanly so that the next pull resumes them; a second Ctrl-C
// kills the process at once.
std::atomic<bool> g_interrupted{false};
constexpr int kExitInterrupted = 130;

extern "C" void OnInterrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace

void AddPullVerb(CLI::App& app) {
  auto options = std::make_shared<hub::PullOptions>();
  options->token_hint = "HF_TOKEN (or --token)";
  CLI::App* verb = app.add_subcommand(
      "pull", "Download a model from the Hugging Face hub (resumable, checksummed) into its cache");
  verb->add_option("repo", options->repo, "model repository ORG/NAME")->capture_default_str();
  verb->add_option("--revision", options->revision, "branch, tag or commit hash")
      ->capture_default_str();
  verb->add_option("--local-dir", options->local_dir,
                   "put plain files in this folder instead of the Hugging Face cache");
  verb->add_option("--token", options->token,
                   "access token for gated or private models (default: $HF_TOKEN, then the token "
                   "saved by `hf auth login`)");
  verb->add_option("--endpoint", options->endpoint,
                   "hub URL (default: $HF_ENDPOINT, then https://huggingface.co)");
  verb->add_option("-j,--jobs", options->jobs, "parallel connections")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  verb->callback([options] {
    hub::PullOptions run = *options;
    g_interrupted = false;
    run.cancel = &g_interrupted;
    const auto previous = std::signal(SIGINT, OnInterrupt);
    hub::PullResult result;
    try {
      result = hub::PullModel(run);
    } catch (const Error& e) {
      std::signal(SIGINT, previous);
      if (!g_interrupted) throw;
      // Stopped by Ctrl-C: 130 (128 + SIGINT), what a shell reports for a command that
      // SIGINT killed, such as `qvl run`; the transfers stopped cleanly, so the next pull
      // resumes them.
      std::fprintf(stderr, "qvl: interrupted: %s\n", e.what());
      SetExitCode(kExitInterrupted);
      return;
    } catch (...) {
      std::signal(SIGINT, previous);
      throw;
    }
    std::signal(SIGINT, previous);
    std::printf("%s\n", result.path.c_str());
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
