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

}  // namespace qvl::cli
