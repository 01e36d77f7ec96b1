#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/error.h"

namespace qvl {
namespace {

[[noreturn]] void FailErrno(const std::string& what, const std::string& path) {
  const int err = errno;
  Fail(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot ", what, " ", path, ": ",
       std::strerror(err));
}

// Opens `path` for reading; returns the descriptor and fills `st`. Folders are refused.
// O_NONBLOCK while opening: a FIFO with no writer would otherwise wait forever; reads
// then block as usual.
int OpenForReading(const std::string& path, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) FailErrno("open", path);
  if (::fstat(fd, st) != 0 || ::fcntl(fd, F_SETFL, 0) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    FailErrno("stat", path);
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    Fail(ErrorCode::kInvalidArgument, path, ": is a folder, not a file");
  }
  return fd;
}

// `size`: a regular file's, 0 for a stream read past the limit.
[[noreturn]] void FailTooLarge(int fd, const std::string& path, uint64_t size, uint64_t max_bytes) {
  ::close(fd);
  Fail(ErrorCode::kTooLarge, path, ": ", size > 0 ? StrCat(size, " bytes, ") : std::string(),
       "more than the ", max_bytes, " bytes allowed here");
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  struct stat st;
  const int fd = OpenForReading(path, &st);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    Fail(ErrorCode::kInvalidArgument, "cannot map ", path,
         ": not a regular file (a device, pipe or socket)");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      FailErrno("mmap", path);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() { Reset(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    path_ = std::move(other.path_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void MappedFile::Reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::Release(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = (offset + page - 1) / page * page;
  const size_t end = std::min(size_, offset + length) / page * page;
  if (end > begin) ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
}

void MappedFile::Touch() const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Faulting is faster than MADV_POPULATE_READ here: each fault maps its neighbours
  // too (fault-around), so most reads find their page already mapped.
  uint8_t sum = 0;
  for (size_t i = 0; i < size_; i += page) sum ^= *static_cast<const volatile uint8_t*>(data_ + i);
  static_cast<void>(sum);
}

std::string ReadFileToString(const std::string& path, uint64_t max_bytes) {
  struct stat st;
  const int fd = OpenForReading(path, &st);
  // A regular file is refused by its size before any of it is read; a pipe or a device
  // has none and is read until it ends or passes the limit.
  const bool regular = S_ISREG(st.st_mode);
  const uint64_t size = regular ? static_cast<uint64_t>(st.st_size) : 0;
  if (size > max_bytes) FailTooLarge(fd, path, size, max_bytes);
  std::string out;
  out.reserve(static_cast<size_t>(size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      FailErrno("read", path);
    }
    if (n == 0) break;
    if (static_cast<uint64_t>(n) > max_bytes - out.size()) FailTooLarge(fd, path, 0, max_bytes);
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

void WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) FailErrno("create", tmp);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = err;
      FailErrno("write", tmp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    FailErrno("sync", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    FailErrno("rename into place", path);
  }
}

}  // namespace qvl
