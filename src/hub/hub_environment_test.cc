#include "hub/hub_environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <optional>

#include "base/error.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

// Sets or clears variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  void Set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class HubEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME",
                             "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH",
                             "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}) {
      env_.Set(name, nullptr);
    }
    env_.Set("HOME", "/home/tester");
  }
  ScopedEnv env_;
};

TEST_F(HubEnvironmentTest, CacheDirPrecedence) {
  EXPECT_EQ(HubCacheDir(), "/home/tester/.cache/huggingface/hub");
  env_.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(HubCacheDir(), "/xdg/huggingface/hub");
  env_.Set("HF_HOME", "~/hf");
  EXPECT_EQ(HubCacheDir(), "/home/tester/hf/hub");
  env_.Set("HUGGINGFACE_HUB_CACHE", "/legacy");
  EXPECT_EQ(HubCacheDir(), "/legacy");
  env_.Set("HF_HUB_CACHE", "/fast/cache");
  EXPECT_EQ(HubCacheDir(), "/fast/cache");
}

TEST_F(HubEnvironmentTest, EndpointFlagBeatsEnvironment) {
  EXPECT_EQ(HubEndpoint(""), "https://huggingface.co");
  env_.Set("HF_ENDPOINT", "https://hf-mirror.example/");
  EXPECT_EQ(HubEndpoint(""), "https://hf-mirror.example");
  EXPECT_EQ(HubEndpoint("http://127.0.0.1:9"), "http://127.0.0.1:9");
}

// libcurl takes "hf-mirror.com" for plain http, which would send HF_TOKEN in cleartext.
TEST_F(HubEnvironmentTest, EndpointWithoutSchemeIsRefusedWithTheFix) {
  env_.Set("HF_ENDPOINT", "hf-mirror.com");
  try {
    HubEndpoint("");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "HF_ENDPOINT=hf-mirror.com is not an http:// or https:// URL: set "
              "HF_ENDPOINT=https://hf-mirror.com");
  }
  try {
    HubEndpoint("mirror.example:8080/");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--endpoint mirror.example:8080 is not an http:// or https:// URL: use --endpoint "
              "https://mirror.example:8080");
  }
  EXPECT_THROW(HubEndpoint("ftp://mirror.example"), Error);
  EXPECT_EQ(HubEndpoint("HTTPS://Mirror.example"), "HTTPS://Mirror.example");
}

TEST_F(HubEnvironmentTest, TokenFromFlagEnvironmentOrLoginFile) {
  testing::TestFolder folder;
  EXPECT_EQ(HubToken(""), "");
  env_.Set("HF_HOME", folder.path().c_str());
  std::ofstream(folder / "token") << "hf_from_file\n";
  EXPECT_EQ(HubToken(""), "hf_from_file");
  env_.Set("HF_TOKEN", "hf_from_env");
  EXPECT_EQ(HubToken(""), "hf_from_env");
  EXPECT_EQ(HubToken("hf_flag"), "hf_flag");
}

TEST_F(HubEnvironmentTest, OfflineSwitch) {
  EXPECT_FALSE(HubOffline());
  env_.Set("HF_HUB_OFFLINE", "0");
  EXPECT_FALSE(HubOffline());
  env_.Set("HF_HUB_OFFLINE", "1");
  EXPECT_TRUE(HubOffline());
}

}  // namespace
}  // namespace qvl::hub
