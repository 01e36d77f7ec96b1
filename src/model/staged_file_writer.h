// Writes a large file through two staging buffers: the caller fills one while a
// background thread writes the other, so producing the bytes and writing them overlap.
// Writes bypass the page cache (O_DIRECT) where the file system allows it, which for a
// multi-GB file written once is 2-3x faster than buffered writes and leaves the cache
// alone. The file appears at its path only on Commit (temporary file + rename).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace qvl {

class StagedFileWriter {
 public:
  // Creates PATH.tmp.PID; throws Error(kIo) naming it on failure.
  explicit StagedFileWriter(const std::string& path);
  // Without Commit, removes the temporary file.
  ~StagedFileWriter();
  StagedFileWriter(const StagedFileWriter&) = delete;
  StagedFileWriter& operator=(const StagedFileWriter&) = delete;

  // Free space at the end of the current buffer: write up to room() bytes at cursor(),
  // then Advance by how many were written. room() is never 0.
  uint8_t* cursor() { return fill_ + used_; }
  size_t room() const { return kBufferBytes - used_; }
  void Advance(size_t n);
  void Append(const uint8_t* data, size_t size);

  // Writes what is left, syncs and renames the file into place.
  void Commit();

  static constexpr size_t kBufferBytes = size_t{32} << 20;  // a multiple of the 4 KiB block

 private:
  void HandOff(size_t bytes);  // gives the fill buffer to the writer thread
  void WaitIdle();             // waits for the writer and rethrows its error
  void WriterLoop();
  int WriteAt(const uint8_t* data, size_t size, uint64_t offset);  // 0 or errno
  [[noreturn]] void FailErrno(const char* what, int err) const;

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  bool direct_ = false;
  bool committed_ = false;
  uint8_t* buffers_[2] = {nullptr, nullptr};
  uint8_t* fill_ = nullptr;  // the buffer the caller fills
  size_t used_ = 0;
  uint64_t file_offset_ = 0;  // where the fill buffer goes in the file

  std::mutex mu_;
  std::condition_variable cv_;
  const uint8_t* pending_ = nullptr;  // buffer handed to the writer, null when idle
  size_t pending_bytes_ = 0;
  uint64_t pending_offset_ = 0;
  int error_ = 0;  // errno of a failed background write
  bool stop_ = false;
  std::thread writer_;
};

}  // namespace qvl
