#include "hub/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace qvl::hub {

FileLock::FileLock(const std::string& path) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) Fail(ErrorCode::kIo, "cannot create lock file ", path, ": ", std::strerror(errno));
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK) {
    LogInfo("waiting for another process that downloads the same file (", path, ")");
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) break;
    }
    return;
  }
  // A file system without flock (some network mounts): go on unlocked, as huggingface_hub does.
  LogDebug("cannot lock ", path, ": ", std::strerror(errno));
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace qvl::hub
