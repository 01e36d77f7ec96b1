// qvl make-random -c CONFIG.json -o DIR: writes a complete model folder with random
// weights in the exact layout of the real checkpoint, for full-size benchmarks without
// the real weights.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "cli/flag_ranges.h"
#include "cli/verbs.h"
#include "model/random_model.h"

namespace qvl::cli {
namespace {

struct MakeRandomFlags {
  RandomModelOptions options;
  std::string dtype = "bf16";
  int64_t seed = 0;  // CLI11 would take -1 for an unsigned flag as 2^64 - 1
  int threads = 0;
};

DType ParseDTypeFlag(const std::string& name) {
  if (name == "bf16") return DType::kBF16;
  if (name == "f16") return DType::kF16;
  if (name == "f32") return DType::kF32;
  if (name == "fp8") return DType::kF8E4M3;
  Fail(ErrorCode::kInvalidArgument, "--dtype ", name, ": use bf16, f16, f32 or fp8");
}

double PeakRssMiB() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

void AddMakeRandomVerb(CLI::App& app) {
  auto flags = std::make_shared<MakeRandomFlags>();
  CLI::App* verb = app.add_subcommand(
      "make-random", "Write a model folder with random weights for a config.json (benchmarks)");
  verb->add_option("-c,--config", flags->options.config_path, "config.json of the model")
      ->required();
  verb->add_option("-o,--output", flags->options.output_dir, "folder to write (created)")
      ->required();
  verb->add_option("--seed", flags->seed, "random seed (same seed, same weights)")
      ->check(IntegerIn(0, std::numeric_limits<int64_t>::max()));
  verb->add_option(
      "--dtype", flags->dtype,
      "weight type: bf16 (default), f16, f32, or fp8 (Linear weights in F8_E4M3 with a "
      "scale per 128x128 block, as Qwen's -FP8 releases)");
  verb->add_option("--tokenizer-from", flags->options.files_from,
                   "folder to copy tokenizer, chat template and preprocessor files from "
                   "(default: the folder of the config)");
  verb->add_option("-t,--threads", flags->threads, "threads (default: one per core)")
      ->check(CLI::Range(0, kMaxThreadsFlag));
  verb->callback([flags] {
    flags->options.dtype = ParseDTypeFlag(flags->dtype);
    flags->options.seed = static_cast<uint64_t>(flags->seed);
    const Stopwatch watch;
    ThreadPool pool(CapThreads(flags->threads, "--threads"));
    const RandomModelSummary s = WriteRandomModel(flags->options, pool);
    std::printf(
        "wrote %s: %zu tensors, %lld parameters, model.safetensors %llu bytes, "
        "%.1f s, peak RSS %.0f MiB\n",
        flags->options.output_dir.c_str(), s.tensors, static_cast<long long>(s.parameters),
        static_cast<unsigned long long>(s.file_bytes), watch.Seconds(), PeakRssMiB());
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
