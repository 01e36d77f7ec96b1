// Test support: runs the built qvl binary and collects its exit code and output.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace qvl::cli {

struct QvlRun {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `qvl ARGS` (a shell-quoted argument string) from the build folder; `env` goes
// before the binary (e.g. "env HF_HUB_CACHE=/tmp/x ").
inline QvlRun RunQvl(const std::string& args, const std::string& env = "") {
  const std::string err_path =
      std::string(::testing::TempDir()) + "/qvl_runner_stderr_" + std::to_string(::getpid());
  const std::string command = env + QVL_BUILD_DIR + "/qvl " + args + " 2>" + err_path;
  QvlRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* err = std::fopen(err_path.c_str(), "rb")) {
    while ((n = std::fread(buffer, 1, sizeof(buffer), err)) > 0) run.err.append(buffer, n);
    std::fclose(err);
  }
  std::remove(err_path.c_str());
  return run;
}

}  // namespace qvl::cli
