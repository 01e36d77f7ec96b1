#include "hub/model_puller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "base/error.h"
#include "base/log.h"
#include "hub/content_digest.h"
#include "hub/mock_hub_server.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::MockFile;
using testing::MockRepo;
using testing::MockRequest;
using ::testing::Not;
using testing::ReadBytes;
using ::testing::StartsWith;

const char kModelFolder[] = QVL_TEST_DATA "/tiny-qwen3vl/model";

// The files of the fixture a pull must fetch (not README.md).
const std::vector<std::string> kPulledFiles = {
    "chat_template.json",       "config.json",
    "generation_config.json",   "model.safetensors",
    "preprocessor_config.json", "tokenizer.json",
    "tokenizer_config.json",    "video_preprocessor_config.json"};

// The fixture model as the mock hub serves it, with each file's ETag; loaded once.
struct TinyModel {
  MockRepo repo;
  std::map<std::string, std::string> etags;
};

const TinyModel& Tiny() {
  static const TinyModel* model = [] {
    auto* m = new TinyModel{testing::LoadRepoFromFolder("Qwen/Tiny-VL", kModelFolder), {}};
    for (const MockFile& file : m->repo.files) {
      m->etags[file.name] =
          DigestOf(file.lfs ? DigestKind::kSha256 : DigestKind::kGitBlobSha1, file.content);
    }
    return m;
  }();
  return *model;
}

std::string EtagOf(const MockFile& file) { return Tiny().etags.at(file.name); }

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

class ModelPullerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing from the machine's environment may leak in (a real token, a real cache).
    for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE",
                             "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT"}) {
      unsetenv(name);
    }
    setenv("HF_HOME", (home_ / "hf").c_str(), 1);
    server_.AddRepo(Tiny().repo);
  }

  PullOptions Options() const {
    PullOptions options;
    options.repo = repo_.id;
    options.endpoint = server_.endpoint();
    options.cache_dir = cache_.path();
    options.jobs = 4;
    options.progress = ProgressStyle::kQuiet;
    options.retry.max_attempts = 3;
    options.retry.backoff_seconds = 0.01;
    options.network.connect_timeout_seconds = 5;
    options.network.stall_timeout_seconds = 5;
    return options;
  }

  const MockFile& File(const std::string& name) const {
    for (const MockFile& file : repo_.files) {
      if (file.name == name) return file;
    }
    ADD_FAILURE() << "no fixture file " << name;
    return repo_.files.front();
  }

  std::string RepoDir() const { return cache_ / "models--Qwen--Tiny-VL"; }

  std::vector<MockRequest> CdnRequests(const std::string& name) const {
    std::vector<MockRequest> found;
    for (const MockRequest& request : server_.requests()) {
      if (request.path == "/cdn/" + EtagOf(File(name))) found.push_back(request);
    }
    return found;
  }

  void ExpectSnapshotComplete() const {
    const std::string snapshot = RepoDir() + "/snapshots/" + repo_.commit;
    EXPECT_EQ(ListDir(snapshot), kPulledFiles);
    for (const std::string& name : kPulledFiles) {
      const std::string link = snapshot + "/" + name;
      ASSERT_TRUE(fs::is_symlink(link)) << link;
      EXPECT_EQ(fs::read_symlink(link).string(), "../../blobs/" + EtagOf(File(name)));
      EXPECT_TRUE(ReadBytes(link) == File(name).content) << name << " differs";
    }
  }

  testing::TestFolder home_;
  testing::TestFolder cache_;
  testing::MockHubServer server_;
  const MockRepo& repo_ = Tiny().repo;
};

TEST_F(ModelPullerTest, FullPullHasHuggingFaceCacheLayout) {
  const PullResult result = PullModel(Options());
  EXPECT_EQ(result.path, RepoDir() + "/snapshots/" + repo_.commit);
  EXPECT_EQ(result.commit, repo_.commit);
  EXPECT_EQ(result.files, 8);
  EXPECT_EQ(result.files_downloaded, 8);
  ExpectSnapshotComplete();
  EXPECT_EQ(ReadBytes(RepoDir() + "/refs/main"), repo_.commit);
  std::vector<std::string> blobs;
  uint64_t total = 0;
  for (const std::string& name : kPulledFiles) {
    blobs.push_back(EtagOf(File(name)));
    total += File(name).content.size();
  }
  std::sort(blobs.begin(), blobs.end());
  EXPECT_EQ(ListDir(RepoDir() + "/blobs"), blobs) << "blobs must hold nothing but verified files";
  EXPECT_EQ(result.bytes_downloaded, total);
  EXPECT_EQ(ListDir(RepoDir()), (std::vector<std::string>{"blobs", "refs", "snapshots"}));
  EXPECT_TRUE(fs::exists(cache_ / "CACHEDIR.TAG"));
}

TEST_F(ModelPullerTest, SecondPullOnlyAsksForTheCommit) {
  PullModel(Options());
  server_.ClearRequests();
  const PullResult again = PullModel(Options());
  EXPECT_EQ(again.files_downloaded, 0);
  EXPECT_EQ(again.bytes_downloaded, 0u);
  const std::vector<MockRequest> requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/api/models/Qwen/Tiny-VL/revision/main");
}

TEST_F(ModelPullerTest, BlobsFromAnotherSnapshotAreReusedWithoutDownloading) {
  PullModel(Options());
  fs::remove_all(RepoDir() + "/snapshots");
  fs::remove_all(RepoDir() + "/refs");
  server_.ClearRequests();
  const PullResult result = PullModel(Options());
  EXPECT_EQ(result.files_downloaded, 0);
  for (const MockRequest& request : server_.requests()) {
    EXPECT_TRUE(request.method == "HEAD" || request.path.rfind("/api/", 0) == 0)
        << request.method << " " << request.path;
  }
  ExpectSnapshotComplete();
}

TEST_F(ModelPullerTest, InterruptedPullLeavesNoSnapshotAndResumesWithRange) {
  server_.CutAfter("model.safetensors", 6'000'000);
  PullOptions options = Options();
  options.retry.max_attempts = 1;
  try {
    PullModel(options);
    FAIL() << "expected the cut connection to fail the pull";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("while fetching file model.safetensors of Qwen/Tiny-VL"));
  }
  const std::string blob = RepoDir() + "/blobs/" + EtagOf(File("model.safetensors"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/snapshots"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/refs/main"));
  EXPECT_FALSE(fs::exists(blob));
  EXPECT_TRUE(fs::exists(blob + ".qvl.incomplete"));

  server_.ClearRequests();
  const PullResult result = PullModel(Options());
  const std::vector<MockRequest> cdn = CdnRequests("model.safetensors");
  ASSERT_EQ(cdn.size(), 1u);
  uint64_t offset = 0;
  ASSERT_EQ(std::sscanf(cdn[0].range.c_str(), "bytes=%lu-", &offset), 1) << cdn[0].range;
  EXPECT_GT(offset, 0u);
  EXPECT_LE(offset, 6'000'000u);
  // Small files the failure cancelled may come again, but never the bytes already on disk.
  uint64_t total = 0;
  for (const std::string& name : kPulledFiles) total += File(name).content.size();
  EXPECT_GE(result.bytes_downloaded, File("model.safetensors").content.size() - offset);
  EXPECT_LE(result.bytes_downloaded, total - offset);
  ExpectSnapshotComplete();
  EXPECT_FALSE(fs::exists(blob + ".qvl.incomplete"));
  EXPECT_FALSE(fs::exists(blob + ".qvl.incomplete.segments"));
}

// A pull that fails half-way never says "downloaded"; it says how much it fetched.
TEST_F(ModelPullerTest, AFailedPullSaysItStoppedAndNeverDownloaded) {
  server_.CutAfter("model.safetensors", 3'000'000);
  PullOptions options = Options();
  options.retry.max_attempts = 1;
  options.progress = ProgressStyle::kLog;
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  EXPECT_THROW(PullModel(options), Error);
  server_.Corrupt("model.safetensors");
  EXPECT_THROW(PullModel(options), Error);
  SetLogSink(nullptr);
  int stopped = 0;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, Not(HasSubstr("downloaded"))) << "a failed pull is no download";
    stopped += line.find("pull of Qwen/Tiny-VL stopped, incomplete: fetched ") != std::string::npos;
  }
  EXPECT_EQ(stopped, 2);
}

TEST_F(ModelPullerTest, OnlyACompletePullSaysDownloaded) {
  PullOptions options = Options();
  options.progress = ProgressStyle::kLog;
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  PullModel(options);
  SetLogSink(nullptr);
  std::vector<std::string> downloaded;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, Not(HasSubstr("stopped")));
    if (line.find("downloaded") != std::string::npos) downloaded.push_back(line);
  }
  ASSERT_EQ(downloaded.size(), 1u);
  EXPECT_THAT(downloaded[0], HasSubstr("downloaded Qwen/Tiny-VL: 8 files, "));
}

TEST_F(ModelPullerTest, CutConnectionIsRetriedWithRangeInTheSameRun) {
  server_.CutAfter("model.safetensors", 3'000'000);
  PullModel(Options());
  const std::vector<MockRequest> cdn = CdnRequests("model.safetensors");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[0].range, "");
  EXPECT_THAT(cdn[1].range, StartsWith("bytes="));
  ExpectSnapshotComplete();
}

TEST_F(ModelPullerTest, StalledTransferTimesOutAndResumes) {
  server_.StallAfter("tokenizer.json", 1'000'000, 3);
  PullOptions options = Options();
  options.network.stall_timeout_seconds = 1;
  PullModel(options);
  const std::vector<MockRequest> cdn = CdnRequests("tokenizer.json");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_THAT(cdn[1].range, StartsWith("bytes=1000000-"));
  ExpectSnapshotComplete();
}

TEST_F(ModelPullerTest, CorruptedDownloadIsRejectedAndNothingIsPlaced) {
  server_.Corrupt("model.safetensors");
  const std::string etag = EtagOf(File("model.safetensors"));
  try {
    PullModel(Options());
    FAIL() << "expected a checksum error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_THAT(e.what(), StartsWith("checksum mismatch for model.safetensors: the hub publishes "
                                     "sha256 " +
                                     etag + " but the download has "));
  }
  EXPECT_FALSE(fs::exists(RepoDir() + "/blobs/" + etag));
  EXPECT_FALSE(fs::exists(RepoDir() + "/blobs/" + etag + ".qvl.incomplete"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/snapshots"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/refs/main"));
}

// Mirrors and proxies rewrite ETags in upper case: the checksum is still checked.
TEST_F(ModelPullerTest, UppercaseEtagsAreStillChecked) {
  server_.SetEtagStyle(testing::EtagStyle::kUpperHex);
  server_.Corrupt("model.safetensors");
  try {
    PullModel(Options());
    FAIL() << "expected a checksum error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_THAT(e.what(), StartsWith("checksum mismatch for model.safetensors"));
  }
  EXPECT_FALSE(fs::exists(RepoDir() + "/snapshots"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/refs/main"));
}

TEST_F(ModelPullerTest, UppercaseEtagsOfGoodFilesVerify) {
  server_.SetEtagStyle(testing::EtagStyle::kUpperHex);
  std::vector<std::string> warnings;
  SetLogSink([&](const std::string& line) { warnings.push_back(line); });
  const PullResult result = PullModel(Options());
  SetLogSink(nullptr);
  EXPECT_EQ(result.files_downloaded, 8);
  for (const std::string& name : kPulledFiles) {
    EXPECT_TRUE(ReadBytes(result.path + "/" + name) == File(name).content) << name;
  }
  for (const std::string& line : warnings) EXPECT_THAT(line, Not(HasSubstr("no checksum")));
}

// A server whose ETags are no digest: the files are placed, each named in a warning.
TEST_F(ModelPullerTest, FilesWithoutADigestAreNamedInAWarning) {
  server_.SetEtagStyle(testing::EtagStyle::kOpaque);
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  const PullResult result = PullModel(Options());
  SetLogSink(nullptr);
  for (const std::string& name : kPulledFiles) {
    int warned = 0;
    for (const std::string& line : lines) {
      warned += line.find("no checksum for " + name + " of Qwen/Tiny-VL: ") != std::string::npos &&
                line.find("only its size will be checked") != std::string::npos;
    }
    EXPECT_EQ(warned, 1) << name;
    EXPECT_TRUE(ReadBytes(result.path + "/" + name) == File(name).content) << name;
  }
}

TEST_F(ModelPullerTest, UnknownRepoIsNotFound) {
  PullOptions options = Options();
  options.repo = "nobody/nothing";
  try {
    PullModel(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(std::string(e.what()), "model nobody/nothing not found on " + server_.endpoint());
  }
}

TEST_F(ModelPullerTest, GatedRepoAsksForTokenAndKeepsItOffTheCdn) {
  MockRepo gated = repo_;
  gated.id = "gated/Tiny-VL";
  gated.token = "hf_secret";
  server_.AddRepo(gated);
  PullOptions options = Options();
  options.repo = gated.id;
  try {
    PullModel(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnauthenticated);
    EXPECT_THAT(e.what(), HasSubstr("HTTP 401"));
    // Only what the running verb offers: serve and run have no --token.
    EXPECT_THAT(e.what(), HasSubstr("set HF_TOKEN to an access token"));
    EXPECT_THAT(e.what(), Not(HasSubstr("--token")));
  }
  setenv("HF_TOKEN", "hf_secret", 1);
  server_.ClearRequests();
  PullModel(options);
  unsetenv("HF_TOKEN");
  for (const MockRequest& request : server_.requests()) {
    const bool cdn = request.path.rfind("/cdn/", 0) == 0;
    EXPECT_EQ(request.authorization, cdn ? "" : "Bearer hf_secret") << request.path;
  }
}

TEST_F(ModelPullerTest, UnreachableEndpointIsNamed) {
  PullOptions options = Options();
  options.endpoint = "http://127.0.0.1:1";
  options.retry.max_attempts = 2;
  try {
    PullModel(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("cannot reach http://127.0.0.1:1 ("));
    EXPECT_THAT(e.what(), HasSubstr("check the network connection"));
  }
}

TEST_F(ModelPullerTest, ServerErrorsAreRetried) {
  server_.FailRequests("/api/models/", 503, 2);
  server_.FailRequests("/Qwen/Tiny-VL/resolve/", 502, 1);
  PullModel(Options());
  EXPECT_EQ(server_.CountRequests("/api/models/"), 3);
  ExpectSnapshotComplete();
}

// A hub that asks for a pause gets it, and the wait is one line at the default level.
TEST_F(ModelPullerTest, RetryAfterIsHonouredAndEachWaitIsLogged) {
  server_.FailRequests("/api/models/", 429, 1, "2");
  server_.FailRequests("/cdn/", 503, 1, "1");
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  const auto start = std::chrono::steady_clock::now();
  PullModel(Options());  // backoff 0.01 s
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetLogSink(nullptr);
  EXPECT_GE(seconds, 2.9);
  int api = 0, cdn = 0;
  for (const std::string& line : lines) {
    api += line.find(server_.endpoint() + " answered HTTP 429; retrying in 2 s (attempt 2 of 3)") !=
           std::string::npos;
    cdn += line.find(" in 1 s (HTTP 503; attempt 2 of 3)") != std::string::npos &&
           line.find("retrying ") != std::string::npos;
  }
  EXPECT_EQ(api, 1);
  EXPECT_EQ(cdn, 1);
  ExpectSnapshotComplete();
}

// A connection that fails through a proxy names the proxy (without its password).
TEST_F(ModelPullerTest, UnreachableProxyIsNamed) {
  for (const char* name : {"no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"}) unsetenv(name);
  setenv("http_proxy", "http://user:pw@127.0.0.1:1", 1);
  PullOptions options = Options();
  options.retry.max_attempts = 1;
  try {
    PullModel(options);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("cannot reach " + server_.endpoint() +
                                     " through the proxy http://***@127.0.0.1:1 (http_proxy) ("));
    EXPECT_THAT(e.what(), Not(HasSubstr("pw")));
  }
  unsetenv("http_proxy");
}

TEST_F(ModelPullerTest, FullDiskNamesThePath) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  const std::string partial =
      RepoDir() + "/blobs/" + EtagOf(File("model.safetensors")) + ".qvl.incomplete";
  fs::create_directories(RepoDir() + "/blobs");
  fs::create_symlink("/dev/full", partial);
  try {
    PullModel(Options());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("disk full: cannot write " + partial));
  }
  EXPECT_FALSE(fs::exists(RepoDir() + "/snapshots"));
}

TEST_F(ModelPullerTest, LocalDirGetsPlainFilesAndHuggingFaceMetadata) {
  PullOptions options = Options();
  options.local_dir = home_ / "model";
  const PullResult result = PullModel(options);
  EXPECT_EQ(result.path, options.local_dir);
  for (const std::string& name : kPulledFiles) {
    const std::string path = options.local_dir + "/" + name;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << path;
    EXPECT_TRUE(ReadBytes(path) == File(name).content) << name;
    const std::string meta =
        ReadBytes(options.local_dir + "/.cache/huggingface/download/" + name + ".metadata");
    EXPECT_THAT(meta, StartsWith(repo_.commit + "\n" + EtagOf(File(name)) + "\n")) << name;
  }
  EXPECT_FALSE(fs::exists(RepoDir())) << "--local-dir must not fill the cache";
  server_.ClearRequests();
  EXPECT_EQ(PullModel(options).files_downloaded, 0);
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(ModelPullerTest, ShardedModelIsFetchedInParallelRanges) {
  MockRepo sharded;
  sharded.id = "org/Sharded";
  sharded.commit = std::string(40, 'b');
  for (const MockFile& file : repo_.files) {
    if (file.name != "model.safetensors") sharded.files.push_back(file);
  }
  std::mt19937 random(7);
  for (const char* name :
       {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    std::string content(3'000'000, '\0');
    for (char& c : content) c = static_cast<char>(random());
    sharded.files.push_back({name, content, true});
  }
  sharded.files.push_back({"model.safetensors.index.json",
                           R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                           R"("b":"model-00002-of-00002.safetensors"}})",
                           false});
  server_.AddRepo(sharded);
  server_.CutAfter("model-00002-of-00002.safetensors", 100'000);
  PullOptions options = Options();
  options.repo = sharded.id;
  options.min_segment_bytes = 256 << 10;
  const PullResult result = PullModel(options);
  for (const MockFile& file : sharded.files) {
    if (file.name.find("safetensors") == std::string::npos) continue;
    EXPECT_TRUE(ReadBytes(result.path + "/" + file.name) == file.content) << file.name;
  }
  int ranged = 0;
  for (const MockRequest& request : server_.requests()) {
    ranged += request.path.rfind("/cdn/", 0) == 0 && !request.range.empty();
  }
  EXPECT_GE(ranged, 2 * 11) << "3 MB shards in ranges of >= 256 KiB: 11 ranges each";
}

// HF_HUB_OFFLINE=1: a complete cached model is the answer, whatever the network or token.
TEST_F(ModelPullerTest, OfflinePullReportsTheCachedSnapshot) {
  const PullResult online = PullModel(Options());
  server_.ClearRequests();
  setenv("HF_HUB_OFFLINE", "1", 1);
  setenv("HF_TOKEN", "hf_wrong", 1);
  PullOptions options = Options();
  options.endpoint = "http://127.0.0.1:1";
  const PullResult offline = PullModel(options);
  EXPECT_EQ(offline.path, online.path);
  EXPECT_EQ(offline.commit, repo_.commit);
  EXPECT_EQ(offline.files_downloaded, 0);
  EXPECT_EQ(server_.requests().size(), 0u);
  options.local_dir = home_ / "plain";
  try {
    PullModel(options);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("HF_HUB_OFFLINE is set and " + options.local_dir + " lacks "));
  }
  options.local_dir.clear();
  options.repo = "nobody/nothing";
  try {
    PullModel(options);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(std::string(e.what()),
              "HF_HUB_OFFLINE is set and nobody/nothing is not complete in the Hugging Face "
              "cache at " +
                  cache_.path() + ": unset HF_HUB_OFFLINE to download it");
  }
  unsetenv("HF_HUB_OFFLINE");
  unsetenv("HF_TOKEN");
}

// As huggingface_hub's snapshot_download: a hub that cannot be reached (or answers an
// error) leaves a complete snapshot usable, with a warning naming the hub's error and
// HF_HUB_OFFLINE; an incomplete one is still the hub's error.
TEST_F(ModelPullerTest, AnUnreachableHubFallsBackToTheCompleteSnapshot) {
  const PullResult online = PullModel(Options());
  PullOptions options = Options();
  options.endpoint = "http://127.0.0.1:1";
  options.retry.max_attempts = 1;
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  const PullResult cached = PullModel(options);
  SetLogSink(nullptr);
  EXPECT_EQ(cached.path, online.path);
  EXPECT_EQ(cached.commit, repo_.commit);
  EXPECT_EQ(cached.files_downloaded, 0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("cannot reach http://127.0.0.1:1 ("));
  EXPECT_THAT(lines[0], HasSubstr(". Using Qwen/Tiny-VL as it is complete in " + online.path +
                                  " (set HF_HUB_OFFLINE=1 to skip the hub)"));

  // A hub error other than "not found" (here 503 on every attempt) is treated alike.
  server_.FailRequests("/api/models/", 503, Options().retry.max_attempts);
  EXPECT_EQ(PullModel(Options()).path, online.path);

  fs::remove(online.path + "/tokenizer.json");
  try {
    PullModel(options);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("cannot reach http://127.0.0.1:1 ("));
  }
}

// The hub saying the repository does not exist is an answer, not an outage: no fallback.
TEST_F(ModelPullerTest, ARepositoryTheHubDoesNotKnowIsNotTakenFromTheCache) {
  PullModel(Options());
  server_.FailRequests("/api/models/", 404, 1);
  try {
    PullModel(Options());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
}

TEST_F(ModelPullerTest, CacheFolderFollowsHfHubCacheThenHfHome) {
  PullOptions options = Options();
  options.cache_dir.clear();
  PullModel(options);
  EXPECT_TRUE(fs::exists(home_ / "hf/hub/models--Qwen--Tiny-VL/refs/main"));
  setenv("HF_HUB_CACHE", (home_ / "hub-cache").c_str(), 1);
  PullModel(options);
  unsetenv("HF_HUB_CACHE");
  EXPECT_TRUE(fs::exists(home_ / "hub-cache/models--Qwen--Tiny-VL/refs/main"));
}

}  // namespace
}  // namespace qvl::hub
