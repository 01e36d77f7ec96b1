// Each verb of the qvl binary lives in its own file and registers itself here.
// A verb's callback sets the process exit code with SetExitCode; errors are thrown
// as qvl::Error and printed by main as one line.
#pragma once

namespace CLI {
class App;
}

namespace qvl::cli {

void SetExitCode(int code);

void AddInfoVerb(CLI::App& app);
void AddQuantizeVerb(CLI::App& app);
void AddBenchVerb(CLI::App& app);
void AddMakeRandomVerb(CLI::App& app);
void AddPullVerb(CLI::App& app);
void AddTokenizeVerb(CLI::App& app);
void AddRunVerb(CLI::App& app);
void AddDumpVerb(CLI::App& app);
void AddServeVerb(CLI::App& app);
void AddBatchVerb(CLI::App& app);

}  // namespace qvl::cli
