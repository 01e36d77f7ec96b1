// An exclusive flock() on a lock file, the same kind huggingface_hub's filelock takes on
// .locks/models--ORG--NAME/<etag>.lock, so qvl and Python never write one blob at once.
// The kernel drops the lock when the process dies.
#pragma once

#include <string>

namespace qvl::hub {

class FileLock {
 public:
  // Blocks until the lock is free, logging once when another process holds it.
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace qvl::hub
