#include "base/page_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/error.h"
#include "base/mapped_file.h"

namespace qvl {
namespace {

TEST(PageCache, FreshlyWrittenFileIsResidentAndCanBeDropped) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("qvl_page_cache_" + std::to_string(::getpid())))
          .string();
  WriteFileAtomically(path, std::string(1 << 20, 'x'));
  EXPECT_DOUBLE_EQ(ResidentFraction(path), 1.0);
  DropFromPageCache(path);  // tmpfs keeps the pages; a disk filesystem may evict them
  const double after = ResidentFraction(path);
  EXPECT_GE(after, 0.0);
  EXPECT_LE(after, 1.0);
  std::filesystem::remove(path);
}

TEST(PageCache, MissingFileNamesThePath) {
  try {
    ResidentFraction("/nonexistent/qvl-weights.safetensors");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_STREQ(e.what(), "/nonexistent/qvl-weights.safetensors: No such file or directory");
  }
}

}  // namespace
}  // namespace qvl
