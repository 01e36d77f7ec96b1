#include "model/packed_weight_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/log.h"
#include "model/qwen3vl.h"
#include "model/safetensors.h"
#include "ops/weight_pack.h"

namespace qvl {
namespace {

namespace fs = std::filesystem;

class PackedWeightCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qvl_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 0.1f);
    for (auto& m : matrices_) {
      m.resize(40 * 96);
      for (uint16_t& v : m) v = F32ToBf16(dist(rng));
    }
    entries_ = {{"a.weight", {DType::kBF16, 40, 96, matrices_[0].data()}, WeightFormat::kQ8},
                {"b.weight", {DType::kBF16, 40, 96, matrices_[1].data()}, WeightFormat::kQ4}};
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<PackedWeightCache> Open(uint64_t key = 7, const std::string& dir = "") {
    return PackedWeightCache::Open(dir.empty() ? dir_.string() : dir, "/models/x", key, entries_,
                                   pool_);
  }
  // Every entry is found and holds exactly the bytes PackPanels makes.
  void ExpectPacked(const PackedWeightCache& cache) {
    for (const auto& e : entries_) {
      const LinearWeight w = cache.Find(e.view, e.format);
      ASSERT_FALSE(w.empty()) << e.name;
      const PackedLayout l = PackedLayoutFor(e.format, e.view.rows, e.view.cols);
      std::vector<uint8_t> want(l.bytes());
      PackPanels(e.view, e.format, 0, l.panels, want.data());
      EXPECT_EQ(0, std::memcmp(w.data(), want.data(), want.size())) << e.name;
    }
    EXPECT_TRUE(cache.Find(entries_[0].view, WeightFormat::kQ4).empty());
  }
  fs::path OnlyFile() {
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir_)) files.push_back(f.path());
    EXPECT_EQ(files.size(), 1u);  // no temporary files left behind
    return files.empty() ? fs::path() : files[0];
  }

  fs::path dir_;
  std::vector<uint16_t> matrices_[2];
  std::vector<PackedWeightCache::Entry> entries_;
  ThreadPool pool_{2, false};
};

TEST_F(PackedWeightCacheTest, BuildsOnceThenMaps) {
  auto first = Open();
  EXPECT_EQ(first->source(), PackedWeightCache::Source::kBuilt);
  ExpectPacked(*first);
  const fs::path file = OnlyFile();
  EXPECT_EQ(first->path(), file.string());
  EXPECT_EQ(file.extension(), ".qvlw");
  auto second = Open();
  EXPECT_EQ(second->source(), PackedWeightCache::Source::kMapped);
  ExpectPacked(*second);
  EXPECT_EQ(second->Find(entries_[0].view, WeightFormat::kQ8).owned_bytes(), 0u);
}

TEST_F(PackedWeightCacheTest, TruncatedOrCorruptFileIsRebuilt) {
  Open();
  const fs::path file = OnlyFile();
  const auto size = fs::file_size(file);
  fs::resize_file(file, size - 100);
  auto rebuilt = Open();
  EXPECT_EQ(rebuilt->source(), PackedWeightCache::Source::kBuilt);
  ExpectPacked(*rebuilt);
  EXPECT_EQ(fs::file_size(OnlyFile()), size);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x5a');
  }
  EXPECT_EQ(Open()->source(), PackedWeightCache::Source::kBuilt);
  EXPECT_EQ(Open()->source(), PackedWeightCache::Source::kMapped);
}

TEST_F(PackedWeightCacheTest, ChangedCheckpointIsRebuilt) {
  Open(7);
  EXPECT_EQ(Open(8)->source(), PackedWeightCache::Source::kBuilt);
  EXPECT_EQ(Open(8)->source(), PackedWeightCache::Source::kMapped);
  OnlyFile();
}

// Other weights of the same shapes copied in with the old file's times (cp -p, rsync -a)
// packed nothing again: the old matrices were served beside the new norms and
// embeddings, a garbled answer with no word in the log.
TEST_F(PackedWeightCacheTest, OtherWeightsUnderTheSameFileTimesAreAnotherCheckpoint) {
  fs::create_directories(dir_);
  const fs::path model = dir_ / "model.safetensors";
  fs::copy_file(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model/model.safetensors", model);
  struct stat before;
  ASSERT_EQ(::stat(model.c_str(), &before), 0);
  const uint64_t key = CheckpointKey(TensorStore::OpenFolder(dir_.string()));
  {
    uint64_t header_len = 0;
    std::fstream f(model, std::ios::in | std::ios::out | std::ios::binary);
    f.read(reinterpret_cast<char*>(&header_len), 8);
    const uint64_t data = fs::file_size(model) - 8 - header_len;
    std::vector<char> bytes(data);
    f.seekg(static_cast<std::streamoff>(8 + header_len));
    f.read(bytes.data(), static_cast<std::streamsize>(data));
    for (size_t i = 0; i < bytes.size(); i += 2) bytes[i] = static_cast<char>(bytes[i] ^ 0x40);
    f.seekp(static_cast<std::streamoff>(8 + header_len));
    f.write(bytes.data(), static_cast<std::streamsize>(data));
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, model.c_str(), times, 0), 0);
  struct stat after;
  ASSERT_EQ(::stat(model.c_str(), &after), 0);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  ASSERT_EQ(after.st_size, before.st_size);
  EXPECT_NE(CheckpointKey(TensorStore::OpenFolder(dir_.string())), key);
}

TEST_F(PackedWeightCacheTest, UnwritableFolderPacksInMemory) {
  fs::create_directories(dir_);
  const fs::path not_a_dir = dir_ / "file";
  std::ofstream(not_a_dir) << "x";
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) { lines.push_back(line); });
  auto cache = Open(7, (not_a_dir / "sub").string());
  SetLogSink({});
  // The folder's own failure is named, not the file's "No such file or directory".
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(
      lines.back().find("cannot cache packed weights (cannot create the folder " +
                        (not_a_dir / "sub").string() + ": Not a directory); packing in memory"),
      std::string::npos)
      << lines.back();
  EXPECT_EQ(cache->source(), PackedWeightCache::Source::kMemory);
  EXPECT_TRUE(cache->path().empty());
  ExpectPacked(*cache);
  auto none = PackedWeightCache::Open("", "/models/x", 7, entries_, pool_);
  EXPECT_EQ(none->source(), PackedWeightCache::Source::kMemory);
  ExpectPacked(*none);
}

// A write that fails after the header (here the file size limit, as a full disk would)
// reaches the caller from the writer thread: nothing is left behind, the run packs in
// memory, and the next start builds the file.
TEST_F(PackedWeightCacheTest, WriteFailingMidwayPacksInMemoryAndLeavesNoFile) {
  rlimit old;
  ASSERT_EQ(0, ::getrlimit(RLIMIT_FSIZE, &old));
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096 + 512;  // the header's page and a little of the first weight
  ASSERT_EQ(0, ::setrlimit(RLIMIT_FSIZE, &small));
  auto cache = Open(9);
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(cache->source(), PackedWeightCache::Source::kMemory);
  ExpectPacked(*cache);
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_EQ(Open(9)->source(), PackedWeightCache::Source::kBuilt);
  OnlyFile();
}

// An interrupted packing (Ctrl-C, a kill) left its temporary file, as large as the
// cache, for ever; one of a writer still running is not touched.
TEST_F(PackedWeightCacheTest, TemporaryFilesOfDeadWritersAreRemoved) {
  fs::create_directories(dir_);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const fs::path dead = dir_ / ("abc-q8-0123.qvlw.tmp-" + std::to_string(child));
  const fs::path running = dir_ / ("abc-q8-0123.qvlw.tmp-" + std::to_string(::getppid()));
  const fs::path other = dir_ / ("notes.txt.tmp-" + std::to_string(child));
  const fs::path recent = dir_ / ("abc-q4-0123.qvlw.tmp-" + std::to_string(child));
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const fs::path& p : {dead, running, other, recent}) {
    std::ofstream(p) << "partial";
    if (p != recent) fs::last_write_time(p, hour_ago);
  }
  EXPECT_EQ(Open()->source(), PackedWeightCache::Source::kBuilt);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_TRUE(fs::exists(other));
  // Written to lately: perhaps a writer in another PID namespace.
  EXPECT_TRUE(fs::exists(recent));
}

// A FIFO where the cache file goes hung the start for ever (open waits for a writer); it
// is not a cache, so it is replaced.
TEST_F(PackedWeightCacheTest, AFifoInPlaceOfTheCacheIsReplaced) {
  const std::string path = Open()->path();
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto cache = Open();
  EXPECT_EQ(cache->source(), PackedWeightCache::Source::kBuilt);
  ExpectPacked(*cache);
  EXPECT_TRUE(fs::is_regular_file(OnlyFile()));
}

// The whole model from the cache computes exactly what the same formats packed in
// memory compute.
TEST_F(PackedWeightCacheTest, CachedModelMatchesInMemoryModel) {
  const std::string model_dir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";
  ModelOptions options;
  options.text_weights = WeightFormat::kQ4;
  options.vision_weights = WeightFormat::kQ8;
  options.weight_cache_dir = "none";
  auto memory = Qwen3VLModel::Load(model_dir, options);
  options.weight_cache_dir = dir_.string();
  auto built = Qwen3VLModel::Load(model_dir, options);
  EXPECT_EQ(built->packed_weights().source(), PackedWeightCache::Source::kBuilt);
  auto mapped = Qwen3VLModel::Load(model_dir, options);
  EXPECT_EQ(mapped->packed_weights().source(), PackedWeightCache::Source::kMapped);

  const TextConfig& c = memory->config().text;
  std::vector<int32_t> tokens = {9707, 11, 1879, 0, 42};
  std::vector<int32_t> pos = {0, 1, 2, 3, 4};
  std::vector<std::vector<float>> logits;
  for (Qwen3VLModel* m : {memory.get(), mapped.get()}) {
    KvPool kv(c, DType::kBF16, 16, 1 << 20);
    const int32_t page = kv.Allocate();
    DecoderChunk chunk;
    chunk.tokens = tokens;
    chunk.positions = {pos.data(), pos.data(), pos.data()};
    chunk.pages = &page;
    chunk.logit_rows = 1;
    logits.emplace_back(c.vocab_size);
    m->text().Forward(std::span<const DecoderChunk>(&chunk, 1), kv, pool_, logits.back().data());
  }
  EXPECT_EQ(0, std::memcmp(logits[0].data(), logits[1].data(), logits[0].size() * 4));
}

}  // namespace
}  // namespace qvl
