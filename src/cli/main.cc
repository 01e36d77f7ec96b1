// qvl: answers questions about images with Qwen3-VL on the CPU.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "base/build_info.h"
#include "base/error.h"
#include "base/log.h"
#include "cli/flag_ranges.h"
#include "cli/verbs.h"

namespace qvl::cli {
namespace {
int g_exit_code = 0;
}  // namespace

void SetExitCode(int code) { g_exit_code = code; }

}  // namespace qvl::cli

int main(int argc, char** argv) {
  CLI::App app{"qvl: ask Qwen3-VL about images, fast, on the CPU"};
  app.set_version_flag("--version", qvl::BuildInfo());
  app.require_subcommand(1);
  app.fallthrough(false);
  qvl::cli::AddInfoVerb(app);
  qvl::cli::AddQuantizeVerb(app);
  qvl::cli::AddBenchVerb(app);
  qvl::cli::AddMakeRandomVerb(app);
  qvl::cli::AddPullVerb(app);
  qvl::cli::AddTokenizeVerb(app);
  qvl::cli::AddRunVerb(app);
  qvl::cli::AddDumpVerb(app);
  qvl::cli::AddServeVerb(app);
  qvl::cli::AddBatchVerb(app);
  qvl::cli::ReadIntegersAsDecimal(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 gives each kind of flag error its own code (105 for a value out of range, 106
    // for a missing flag, ...); qvl's errors are 1 whatever they are, and --help is 0.
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const qvl::Error& e) {
    // A server asked for JSON logs: its last line is one too.
    if (qvl::GetLogFormat() == qvl::LogFormat::kJson) {
      qvl::LogError(e.what());
    } else {
      std::fprintf(stderr, "qvl: error: %s\n", e.what());
    }
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qvl: internal error: %s\n", e.what());
    return 2;
  }
  return qvl::cli::g_exit_code;
}
