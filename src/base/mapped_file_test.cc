#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "base/error.h"

namespace qvl {
namespace {

std::string TempPath(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name + std::to_string(::getpid());
}

TEST(MappedFile, MapsWrittenBytes) {
  const std::string path = TempPath("mapped");
  WriteFileAtomically(path, "hello weights");
  MappedFile file(path);
  ASSERT_EQ(file.size(), 13u);
  EXPECT_EQ(std::memcmp(file.data(), "hello weights", 13), 0);
  EXPECT_EQ(ReadFileToString(path), "hello weights");
  ::unlink(path.c_str());
}

TEST(MappedFile, EmptyFile) {
  const std::string path = TempPath("empty");
  WriteFileAtomically(path, "");
  MappedFile file(path);
  EXPECT_EQ(file.size(), 0u);
  ::unlink(path.c_str());
}

TEST(MappedFile, MissingFileNamesPath) {
  try {
    MappedFile file("/nonexistent/dir/model.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.safetensors"), std::string::npos);
  }
}

TEST(MappedFile, DirectoryIsRefused) { EXPECT_THROW(MappedFile file("/tmp"), Error); }

}  // namespace
}  // namespace qvl
