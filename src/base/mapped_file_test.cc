#include "base/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "base/error.h"
#include "base/mapped_rss_for_test.h"

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

TEST(MappedFile, TouchMapsEveryPage) {
  const std::string path = TempPath("touch");
  WriteFileAtomically(path, std::string(size_t{4} << 20, 'w'));
  MappedFile file(path);
  EXPECT_EQ(MappedRssAt(file.data()), 0u);
  file.Touch();
  EXPECT_EQ(MappedRssAt(file.data()), file.size());
  ::unlink(path.c_str());
}

// Release unmaps the whole pages inside the range (the kernel may drop the rest of a
// huge page with them: a read maps it again), nothing for a range within one page, and
// the data reads back the same.
TEST(MappedFile, ReleaseUnmapsTheWholePagesInsideTheRange) {
  const std::string path = TempPath("release");
  std::string bytes(size_t{4} << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 4096);
  WriteFileAtomically(path, bytes);
  MappedFile file(path);
  file.Touch();
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  file.Release(10 * page + 100, page);         // inside pages 10 and 11, neither whole
  file.Release(file.size() - page / 2, page);  // half the last page, and past the end
  EXPECT_EQ(MappedRssAt(file.data()), file.size());
  // From the middle of page 10 to the middle of page 30: pages 11 to 29 go.
  file.Release(10 * page + 100, 20 * page);
  EXPECT_LE(MappedRssAt(file.data()), file.size() - 19 * page);
  EXPECT_EQ(std::memcmp(file.data(), bytes.data(), bytes.size()), 0);
  file.Release(0, file.size());
  EXPECT_EQ(MappedRssAt(file.data()), 0u);
  EXPECT_EQ(std::memcmp(file.data(), bytes.data(), bytes.size()), 0);
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

// A folder read as "" (0 bytes), /dev/zero until memory ran out, and a FIFO without a
// writer hung: a folder is refused, and streams are read until they end or pass the limit.
TEST(ReadFileToString, RefusesAFolderAndReadsStreamsUpToTheLimit) {
  try {
    ReadFileToString("/tmp");
    ADD_FAILURE() << "a folder was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "/tmp: is a folder, not a file");
  }
  try {
    ReadFileToString("/dev/zero", 1 << 20);
    ADD_FAILURE() << "/dev/zero ended";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_STREQ(e.what(), "/dev/zero: more than the 1048576 bytes allowed here");
  }
  const std::string fifo = TempPath("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadFileToString(fifo), "");  // no writer: it ends at once
  std::thread feeder([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "piped", 5), 5);
    ::close(fd);
  });
  std::string read;
  // The reader may open before or after the writer; before, it may see the end first.
  for (int i = 0; i < 200 && read.empty(); ++i) {
    read = ReadFileToString(fifo);
    if (read.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  feeder.join();
  EXPECT_EQ(read, "piped");
  EXPECT_THROW(MappedFile file(fifo), Error);
  ::unlink(fifo.c_str());
}

TEST(ReadFileToString, RefusesAFileOverTheLimitBeforeReadingIt) {
  const std::string path = TempPath("limit");
  WriteFileAtomically(path, "0123456789");
  EXPECT_EQ(ReadFileToString(path, 10), "0123456789");
  try {
    ReadFileToString(path, 9);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_EQ(std::string(e.what()), path + ": 10 bytes, more than the 9 bytes allowed here");
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace qvl
