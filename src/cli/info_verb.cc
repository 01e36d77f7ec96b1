#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "base/cpu_features.h"
#include "cli/verbs.h"

namespace qvl::cli {

void AddInfoVerb(CLI::App& app) {
  auto model_dir = std::make_shared<std::string>();
  CLI::App* verb =
      app.add_subcommand("info", "Validate a model folder and describe it and this CPU");
  verb->add_option("-m,--model", *model_dir, "model folder (Hugging Face layout)");
  verb->callback([model_dir] {
    std::printf("cpu: %s\n", DescribeCpu().c_str());
    std::printf("kernel tier: %s\n", CpuTierName(ActiveTier()));
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
