#include "server/local_media.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/field_error.h"
#include "server/byte_size.h"

namespace qvl {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool HasDotDotComponent(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

std::string CanonicalFolder(const std::string& dir, std::string_view field) {
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) {
    FailField(ErrorCode::kInvalidArgument, field, "the media folder ", dir,
              " cannot be opened: ", std::strerror(errno));
  }
  return resolved;
}

// The path the kernel actually opened, read back from /proc so that a symlink swapped
// in after any check cannot redirect the read.
std::string OpenedPath(int fd) {
  char buffer[PATH_MAX];
  const std::string link = StrCat("/proc/self/fd/", fd);
  const ssize_t n = ::readlink(link.c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<size_t>(n));
}

bool IsInside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

}  // namespace

std::vector<uint8_t> ReadLocalMedia(std::string_view path_text, const LocalMediaPolicy& policy,
                                    int64_t max_bytes, std::string_view field,
                                    std::string_view noun) {
  if (!policy.enabled) {
    FailField(ErrorCode::kInvalidArgument, field,
              "local files are not allowed on this server; send the ", noun, " as a data:", noun,
              "/...;base64 URL (the operator can allow a folder with --allowed-local-media DIR)");
  }
  std::string_view path = path_text;
  if (path.rfind("file://", 0) == 0) {
    path.remove_prefix(7);
    if (!path.empty() && path.front() != '/') {
      FailField(ErrorCode::kInvalidArgument, field,
                "file:// URLs must name an absolute path on this machine (file:///dir/image.png)");
    }
  }
  if (path.empty()) FailField(ErrorCode::kInvalidArgument, field, "empty file path");
  if (path.find('\0') != std::string_view::npos) {
    FailField(ErrorCode::kInvalidArgument, field, "the file path contains a NUL character");
  }
  if (HasDotDotComponent(path)) {
    FailField(ErrorCode::kInvalidArgument, field, "'..' is not allowed in file paths");
  }
  const std::string root = policy.root.empty() ? "" : CanonicalFolder(policy.root, field);
  std::string full(path);
  if (full.front() != '/') {
    const std::string& base = !policy.base_dir.empty() ? policy.base_dir : root;
    if (!base.empty()) full = StrCat(base, "/", full);
  }
  // Checked before opening too, so nothing outside the root (a device, a FIFO) is ever
  // opened; the check after opening closes the race with a symlink swapped in between.
  char resolved[PATH_MAX];
  if (!root.empty() && ::realpath(full.c_str(), resolved) != nullptr && !IsInside(resolved, root)) {
    FailField(ErrorCode::kInvalidArgument, field, path,
              " is outside the folder this server allows media from");
  }
  const FileDescriptor fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      FailField(ErrorCode::kNotFound, field, "no such file: ", path);
    }
    FailField(ErrorCode::kInvalidArgument, field, "cannot open ", path, ": ", std::strerror(error));
  }
  if (!root.empty() && !IsInside(OpenedPath(fd.get()), root)) {
    FailField(ErrorCode::kInvalidArgument, field, path,
              " is outside the folder this server allows media from");
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    FailField(ErrorCode::kInvalidArgument, field, path, " is not a regular file");
  }
  if (info.st_size > max_bytes) {
    FailField(ErrorCode::kTooLarge, field, "the file is ", FormatByteSize(info.st_size),
              ", over the limit of ", FormatByteSize(max_bytes), " per image");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      FailField(ErrorCode::kInvalidArgument, field, "cannot read ", path, ": ",
                n == 0 ? "the file shrank while it was read" : std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return bytes;
}

}  // namespace qvl
