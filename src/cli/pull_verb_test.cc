#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "cli/verbs.h"
#include "hub/mock_hub_server.h"
#include "hub/test_folder.h"

namespace qvl::cli {

int g_exit_code = -1;
void SetExitCode(int code) { g_exit_code = code; }

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Runs `qvl pull ARGS...` and returns what it printed on stdout.
std::string RunPull(std::vector<std::string> args) {
  CLI::App app;
  AddPullVerb(app);
  args.insert(args.begin(), {"qvl", "pull"});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  g_exit_code = -1;
  ::testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

class PullVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HF_TOKEN", "HF_HUB_CACHE", "HF_ENDPOINT", "HF_HUB_OFFLINE"}) {
      unsetenv(name);
    }
    setenv("HF_HOME", home_.path().c_str(), 1);
    server_.AddRepo(
        hub::testing::LoadRepoFromFolder("Qwen/Tiny-VL", QVL_TEST_DATA "/tiny-qwen3vl/model"));
  }
  hub::testing::TestFolder home_;
  hub::testing::MockHubServer server_;
};

TEST_F(PullVerbTest, PrintsTheSnapshotFolder) {
  setenv("HF_ENDPOINT", server_.endpoint().c_str(), 1);
  const std::string printed = RunPull({"Qwen/Tiny-VL", "--jobs", "2"});
  unsetenv("HF_ENDPOINT");
  const std::string refs = home_ / "hub/models--Qwen--Tiny-VL/refs/main";
  ASSERT_TRUE(fs::exists(refs));
  EXPECT_EQ(printed,
            home_ / "hub/models--Qwen--Tiny-VL/snapshots/" + hub::testing::ReadBytes(refs) + "\n");
  EXPECT_EQ(g_exit_code, 0);
}

TEST_F(PullVerbTest, LocalDirAndEndpointFlags) {
  const std::string dir = home_ / "plain";
  EXPECT_EQ(RunPull({"Qwen/Tiny-VL", "--endpoint", server_.endpoint(), "--local-dir", dir}),
            dir + "\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir + "/model.safetensors")));
}

TEST_F(PullVerbTest, MissingModelErrorNamesEndpoint) {
  try {
    RunPull({"nobody/nothing", "--endpoint", server_.endpoint()});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "model nobody/nothing not found on " + server_.endpoint());
  }
}

// Without a scheme libcurl would use plain http and send HF_TOKEN in cleartext.
TEST_F(PullVerbTest, EndpointWithoutSchemeIsRefusedBeforeAnyRequest) {
  setenv("HF_ENDPOINT", "hf-mirror.com", 1);
  setenv("HF_TOKEN", "hf_secret", 1);
  try {
    RunPull({"Qwen/Tiny-VL"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "HF_ENDPOINT=hf-mirror.com is not an http:// or https:// URL: set "
              "HF_ENDPOINT=https://hf-mirror.com");
  }
  unsetenv("HF_ENDPOINT");
  unsetenv("HF_TOKEN");
  EXPECT_FALSE(fs::exists(home_ / "hub/models--Qwen--Tiny-VL"));
}

// Ctrl-C stops the transfers, says how much was fetched (never "downloaded"), prints no
// folder and exits 130, as a command killed by SIGINT.
TEST_F(PullVerbTest, CtrlCExits130WithoutClaimingADownload) {
  server_.StallAfter("model.safetensors", 1'000'000, 3);
  std::thread interrupt([this] {
    while (server_.CountRequests("/cdn/") == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  ::testing::internal::CaptureStderr();
  std::string printed;
  try {
    printed = RunPull({"Qwen/Tiny-VL", "--endpoint", server_.endpoint()});
  } catch (...) {
    interrupt.join();
    ::testing::internal::GetCapturedStderr();
    throw;
  }
  interrupt.join();
  const std::string errors = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(g_exit_code, 130);
  EXPECT_EQ(printed, "");
  EXPECT_THAT(errors, HasSubstr("pull of Qwen/Tiny-VL stopped, incomplete: fetched "));
  EXPECT_THAT(errors, HasSubstr("qvl: interrupted: download of model.safetensors was "
                                "interrupted; run the command again to resume it"));
  EXPECT_THAT(errors, Not(HasSubstr("downloaded")));
  EXPECT_FALSE(fs::exists(home_ / "hub/models--Qwen--Tiny-VL/refs/main"));
}

// pull has --token, so its error names it beside HF_TOKEN.
TEST_F(PullVerbTest, GatedModelErrorNamesTheTokenFlag) {
  hub::testing::MockRepo gated =
      hub::testing::LoadRepoFromFolder("gated/Tiny-VL", QVL_TEST_DATA "/tiny-qwen3vl/model");
  gated.token = "hf_secret";
  server_.AddRepo(gated);
  try {
    RunPull({"gated/Tiny-VL", "--endpoint", server_.endpoint()});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("set HF_TOKEN (or --token) to an access token"));
  }
  RunPull({"gated/Tiny-VL", "--endpoint", server_.endpoint(), "--token", "hf_secret"});
  EXPECT_EQ(g_exit_code, 0);
}

TEST_F(PullVerbTest, OfflinePullOfACachedModelPrintsItsFolder) {
  const std::string online = RunPull({"Qwen/Tiny-VL", "--endpoint", server_.endpoint()});
  server_.Stop();
  setenv("HF_HUB_OFFLINE", "1", 1);
  const std::string offline = RunPull({"Qwen/Tiny-VL", "--endpoint", server_.endpoint()});
  unsetenv("HF_HUB_OFFLINE");
  EXPECT_EQ(offline, online);
  EXPECT_EQ(g_exit_code, 0);
}

TEST_F(PullVerbTest, RejectsBadJobs) {
  EXPECT_THROW(RunPull({"Qwen/Tiny-VL", "--jobs", "0"}), CLI::ValidationError);
}

}  // namespace
}  // namespace qvl::cli
