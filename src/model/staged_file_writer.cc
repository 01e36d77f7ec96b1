#include "model/staged_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace qvl {
namespace {

constexpr size_t kBlock = 4096;  // O_DIRECT alignment of memory, offsets and lengths

}  // namespace

StagedFileWriter::StagedFileWriter(const std::string& path)
    : path_(path), tmp_path_(path + ".tmp." + std::to_string(::getpid())) {
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  fd_ = ::open(tmp_path_.c_str(), flags | O_DIRECT, 0644);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL) fd_ = ::open(tmp_path_.c_str(), flags, 0644);
  if (fd_ < 0) FailErrno("create", errno);
  for (uint8_t*& buffer : buffers_) {
    buffer = static_cast<uint8_t*>(std::aligned_alloc(kBlock, kBufferBytes));
    if (buffer == nullptr) {
      ::close(fd_);
      ::unlink(tmp_path_.c_str());
      std::free(buffers_[0]);
      Fail(ErrorCode::kIo, "cannot allocate a write buffer for ", tmp_path_);
    }
  }
  fill_ = buffers_[0];
  writer_ = std::thread([this] { WriterLoop(); });
}

StagedFileWriter::~StagedFileWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
  for (uint8_t* buffer : buffers_) std::free(buffer);
}

void StagedFileWriter::FailErrno(const char* what, int err) const {
  Fail(ErrorCode::kIo, "cannot ", what, " ", tmp_path_, ": ", std::strerror(err));
}

void StagedFileWriter::Advance(size_t n) {
  used_ += n;
  if (used_ == kBufferBytes) HandOff(kBufferBytes);
}

void StagedFileWriter::Append(const uint8_t* data, size_t size) {
  while (size > 0) {
    const size_t n = size < room() ? size : room();
    std::memcpy(cursor(), data, n);
    data += n;
    size -= n;
    Advance(n);
  }
}

void StagedFileWriter::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return pending_ == nullptr; });
  if (error_ != 0) FailErrno("write", error_);
}

void StagedFileWriter::HandOff(size_t bytes) {
  WaitIdle();
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = fill_;
    pending_bytes_ = bytes;
    pending_offset_ = file_offset_;
  }
  cv_.notify_all();
  file_offset_ += bytes;
  fill_ = fill_ == buffers_[0] ? buffers_[1] : buffers_[0];
  used_ = 0;
}

void StagedFileWriter::WriterLoop() {
  for (;;) {
    const uint8_t* data;
    size_t size;
    uint64_t offset;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return pending_ != nullptr || stop_; });
      if (pending_ == nullptr) return;
      data = pending_;
      size = pending_bytes_;
      offset = pending_offset_;
    }
    const int err = WriteAt(data, size, offset);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (err != 0 && error_ == 0) error_ = err;
      pending_ = nullptr;
    }
    cv_.notify_all();
  }
}

// Only one thread calls this at a time: the writer thread, or Commit once it is idle.
int StagedFileWriter::WriteAt(const uint8_t* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      // Some file systems accept O_DIRECT at open and refuse it on write.
      if (errno == EINVAL && direct_) {
        direct_ = false;
        if (::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT) == 0) continue;
      }
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

void StagedFileWriter::Commit() {
  WaitIdle();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  const size_t aligned = used_ / kBlock * kBlock;
  if (const int err = WriteAt(fill_, aligned, file_offset_)) FailErrno("write", err);
  // The tail is shorter than a block, which O_DIRECT cannot write.
  if (direct_ && aligned < used_) {
    if (::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT) != 0) FailErrno("write", errno);
    direct_ = false;
  }
  if (const int err = WriteAt(fill_ + aligned, used_ - aligned, file_offset_ + aligned)) {
    FailErrno("write", err);
  }
  if (::fdatasync(fd_) != 0) FailErrno("sync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) FailErrno("close", errno);
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    Fail(ErrorCode::kIo, "cannot rename ", tmp_path_, " to ", path_, ": ", std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace qvl
