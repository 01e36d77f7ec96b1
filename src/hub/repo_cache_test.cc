#include "hub/repo_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

std::string ReadLink(const std::string& path) {
  char target[4096];
  const ssize_t n = readlink(path.c_str(), target, sizeof(target));
  return n < 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

TEST(RepoCacheTest, FolderNameIsHuggingFaceStyle) {
  EXPECT_EQ(RepoFolderName("Qwen/Qwen3-VL-2B-Instruct"), "models--Qwen--Qwen3-VL-2B-Instruct");
}

TEST(RepoCacheTest, RejectsBadRepoIds) {
  ValidateRepoId("Qwen/Qwen3-VL-2B-Instruct");
  ValidateRepoId("my_org/model.v2");
  for (const char* bad : {"Qwen", "a/b/c", "/x", "a/", "a/..", "a/b--c", "a/b c", "a/-b"}) {
    EXPECT_THROW(ValidateRepoId(bad), Error) << bad;
  }
}

TEST(RepoCacheTest, RejectsFilenamesOutsideTheRepo) {
  ValidateRepoFilename("config.json");
  ValidateRepoFilename("sub/dir/file.bin");
  for (const char* bad : {"", "../x", "a/../b", "/etc/passwd", "a//b", "a\\b", "a/", "./a"}) {
    EXPECT_THROW(ValidateRepoFilename(bad), Error) << bad;
  }
}

TEST(RepoCacheTest, SnapshotLinksAreRelativeToBlobs) {
  testing::TestFolder folder;
  RepoCache cache(folder.path(), "org/model");
  cache.Prepare();
  const std::string commit(40, 'c');
  std::ofstream(cache.BlobPath("e1")) << "one";
  std::ofstream(cache.BlobPath("e2")) << "two";
  cache.LinkSnapshotFile(commit, "config.json", "e1");
  cache.LinkSnapshotFile(commit, "sub/dir/file.bin", "e2");
  EXPECT_EQ(ReadLink(cache.SnapshotFile(commit, "config.json")), "../../blobs/e1");
  EXPECT_EQ(ReadLink(cache.SnapshotFile(commit, "sub/dir/file.bin")), "../../../../blobs/e2");
  EXPECT_EQ(testing::ReadBytes(cache.SnapshotFile(commit, "sub/dir/file.bin")), "two");
  EXPECT_TRUE(std::filesystem::exists(folder / "CACHEDIR.TAG"));
  EXPECT_TRUE(std::filesystem::is_directory(folder / ".locks/models--org--model"));
}

TEST(RepoCacheTest, RefsHoldTheCommitWithoutNewline) {
  testing::TestFolder folder;
  RepoCache cache(folder.path(), "org/model");
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(cache.ResolveRevision("main"), "");
  cache.WriteRef("main", commit);
  EXPECT_EQ(testing::ReadBytes(folder / "models--org--model/refs/main"), commit);
  EXPECT_EQ(cache.ResolveRevision("main"), commit);
  EXPECT_EQ(cache.ResolveRevision(commit), commit);
  cache.WriteRef("refs/pr/1", commit);
  EXPECT_EQ(cache.ResolveRevision("refs/pr/1"), commit);
}

}  // namespace
}  // namespace qvl::hub
