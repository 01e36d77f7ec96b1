#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <string>

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

// Resident bytes of the mapping that starts at `start`, from /proc/self/smaps.
size_t MappedRss(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    if (line.find('-') != std::string::npos && std::isxdigit(line[0]) && line.find(':') > 20) {
      in_mapping = std::stoull(line.substr(0, line.find('-')), nullptr, 16) ==
                   reinterpret_cast<uintptr_t>(start);
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stoull(line.substr(4)) * 1024;
    }
  }
  ADD_FAILURE() << "no mapping at " << start << " in /proc/self/smaps";
  return 0;
}

TEST(MappedFile, TouchMapsEveryPage) {
  const std::string path = TempPath("touch");
  WriteFileAtomically(path, std::string(size_t{4} << 20, 'w'));
  MappedFile file(path);
  EXPECT_EQ(MappedRss(file.data()), 0u);
  file.Touch();
  EXPECT_EQ(MappedRss(file.data()), file.size());
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
