#include "hub/model_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "base/error.h"
#include "hub/mock_hub_server.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const testing::MockRepo& TinyRepo() {
  static const testing::MockRepo* repo = new testing::MockRepo(
      testing::LoadRepoFromFolder("Qwen/Tiny-VL", QVL_TEST_DATA "/tiny-qwen3vl/model"));
  return *repo;
}

class ModelResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HF_TOKEN", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT"}) {
      unsetenv(name);
    }
    setenv("HF_HOME", (home_ / "hf").c_str(), 1);
    server_.AddRepo(repo_);
  }

  ResolveOptions Options() const {
    ResolveOptions options;
    options.pull.endpoint = server_.endpoint();
    options.pull.cache_dir = cache_.path();
    options.pull.progress = ProgressStyle::kQuiet;
    options.pull.retry.max_attempts = 1;
    return options;
  }

  std::string Snapshot() const {
    return cache_ / ("models--Qwen--Tiny-VL/snapshots/" + repo_.commit);
  }

  testing::TestFolder home_;
  testing::TestFolder cache_;
  testing::MockHubServer server_;
  const testing::MockRepo& repo_ = TinyRepo();
};

TEST_F(ModelResolverTest, ExistingFolderIsReturnedAsIs) {
  EXPECT_EQ(ResolveModel(home_.path(), Options()), home_.path());
  EXPECT_EQ(server_.requests().size(), 0u);
}

TEST_F(ModelResolverTest, MissingFolderPathIsNotTreatedAsRepo) {
  for (const std::string spec : {"./nope", "/no/such/model", "a/b/c"}) {
    try {
      ResolveModel(spec, Options());
      FAIL() << spec;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "model folder " + spec + " does not exist");
    }
  }
}

TEST_F(ModelResolverTest, CachedRepoIsFoundWithoutNetwork) {
  ResolveModel("Qwen/Tiny-VL", Options());
  server_.Stop();
  EXPECT_EQ(ResolveModel("Qwen/Tiny-VL", Options()), Snapshot());
  ResolveOptions no_download = Options();
  no_download.allow_download = false;
  EXPECT_EQ(ResolveModel("Qwen/Tiny-VL", no_download), Snapshot());
}

TEST_F(ModelResolverTest, MissingRepoIsPulledFirst) {
  EXPECT_EQ(ResolveModel("Qwen/Tiny-VL", Options()), Snapshot());
  EXPECT_TRUE(fs::exists(Snapshot() + "/model.safetensors"));
}

// serve and run have no --token flag: their errors name only HF_TOKEN.
TEST_F(ModelResolverTest, GatedModelErrorsNameOnlyWhatServeAndRunOffer) {
  testing::MockRepo gated = repo_;
  gated.id = "gated/Tiny-VL";
  gated.token = "hf_secret";
  server_.AddRepo(gated);
  for (const char* token : {"", "hf_wrong"}) {
    setenv("HF_TOKEN", token, 1);
    try {
      ResolveModel(gated.id, Options());
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnauthenticated);
      EXPECT_THAT(e.what(), HasSubstr(*token ? "check that HF_TOKEN is valid" : "set HF_TOKEN to"));
      EXPECT_THAT(e.what(), Not(HasSubstr("--token")));
    }
  }
  unsetenv("HF_TOKEN");
}

TEST_F(ModelResolverTest, NoDownloadSaysHowToGetTheModel) {
  ResolveOptions options = Options();
  options.allow_download = false;
  try {
    ResolveModel("Qwen/Tiny-VL", options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(std::string(e.what()),
              "model Qwen/Tiny-VL is not in the Hugging Face cache at " + cache_.path() +
                  " and downloads are off (--no-download): run `qvl pull Qwen/Tiny-VL` first, "
                  "or pass a model folder");
  }
  EXPECT_EQ(server_.requests().size(), 0u);
}

TEST_F(ModelResolverTest, OfflineEnvironmentDisablesDownloads) {
  setenv("HF_HUB_OFFLINE", "1", 1);
  try {
    ResolveModel("Qwen/Tiny-VL", Options());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("downloads are off (HF_HUB_OFFLINE)"));
  }
  unsetenv("HF_HUB_OFFLINE");
}

TEST_F(ModelResolverTest, IncompleteSnapshotIsRepairedFromCachedBlobs) {
  ResolveModel("Qwen/Tiny-VL", Options());
  fs::remove(Snapshot() + "/model.safetensors");
  ResolveOptions no_download = Options();
  no_download.allow_download = false;
  EXPECT_THROW(ResolveModel("Qwen/Tiny-VL", no_download), Error);
  server_.ClearRequests();
  EXPECT_EQ(ResolveModel("Qwen/Tiny-VL", Options()), Snapshot());
  EXPECT_EQ(server_.CountRequests("/cdn/"), 0) << "the blob was already in the cache";
  EXPECT_TRUE(fs::exists(Snapshot() + "/model.safetensors"));
}

TEST_F(ModelResolverTest, LocalResolutionNeverDownloads) {
  EXPECT_EQ(ResolveLocalModel(home_.path(), Options()), home_.path());
  EXPECT_EQ(ResolveLocalModel("Qwen/Tiny-VL", Options()), "");
  EXPECT_FALSE(fs::exists(Snapshot()));
  EXPECT_THROW(ResolveLocalModel(home_ / "missing", Options()), Error);
  ResolveOptions no_download = Options();
  no_download.allow_download = false;
  EXPECT_THROW(ResolveLocalModel("Qwen/Tiny-VL", no_download), Error);
  ResolveModel("Qwen/Tiny-VL", Options());
  EXPECT_EQ(ResolveLocalModel("Qwen/Tiny-VL", no_download), Snapshot());
}

TEST_F(ModelResolverTest, ServedIdIsTheRepoNameWhereItIsKnown) {
  EXPECT_EQ(ServedModelId("Qwen/Qwen3-VL-2B-Instruct"), "Qwen/Qwen3-VL-2B-Instruct");
  ResolveModel("Qwen/Tiny-VL", Options());
  EXPECT_EQ(ServedModelId(Snapshot()), "Qwen/Tiny-VL");
  EXPECT_EQ(ServedModelId(Snapshot() + "/"), "Qwen/Tiny-VL");
  fs::create_directories(home_ / "models/Qwen3-VL-2B-Instruct");
  EXPECT_EQ(ServedModelId(home_ / "models/Qwen3-VL-2B-Instruct"), "Qwen3-VL-2B-Instruct");
  EXPECT_EQ(ServedModelId(home_ / "models/Qwen3-VL-2B-Instruct/"), "Qwen3-VL-2B-Instruct");
  EXPECT_EQ(ServedModelId(home_ / "models/Qwen3-VL-2B-Instruct/."), "Qwen3-VL-2B-Instruct");
  // A folder that only looks like the cache's layout halfway keeps its own name.
  fs::create_directories(home_ / "models--x/snapshots/abc");
  EXPECT_EQ(ServedModelId(home_ / "models--x/snapshots/abc"), "abc");
}

TEST_F(ModelResolverTest, DefaultCacheComesFromHfHome) {
  ResolveOptions options = Options();
  options.pull.cache_dir.clear();
  EXPECT_EQ(ResolveModel("Qwen/Tiny-VL", options),
            home_ / ("hf/hub/models--Qwen--Tiny-VL/snapshots/" + repo_.commit));
}

}  // namespace
}  // namespace qvl::hub
