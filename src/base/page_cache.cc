#include "base/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace qvl {
namespace {

class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) {
      Fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, path, ": ",
           std::strerror(errno));
    }
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

double ResidentFraction(const std::string& path) {
  Fd fd(path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) Fail(ErrorCode::kIo, path, ": ", std::strerror(errno));
  if (st.st_size == 0) return 1.0;
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) Fail(ErrorCode::kIo, path, ": mmap: ", std::strerror(errno));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  const int rc = ::mincore(map, size, resident.data());
  const int err = errno;
  ::munmap(map, size);
  if (rc != 0) Fail(ErrorCode::kIo, path, ": mincore: ", std::strerror(err));
  size_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return static_cast<double>(count) / static_cast<double>(resident.size());
}

void DropFromPageCache(const std::string& path) {
  Fd fd(path);
  const int rc = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) Fail(ErrorCode::kIo, path, ": posix_fadvise: ", std::strerror(rc));
}

}  // namespace qvl
