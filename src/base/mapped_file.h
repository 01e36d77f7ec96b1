// A read-only memory map of a whole file. Model weights are used in place from the
// map (zero copy); the page cache shares them between processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace qvl {

class MappedFile {
 public:
  // Maps `path`; throws Error(kNotFound / kIo) naming the path on failure. An empty
  // file maps to data() == nullptr, size() == 0.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Unmaps the whole pages inside [offset, offset + length) from this process
  // (MADV_DONTNEED): they leave its resident memory but stay in the page cache, and a
  // later read maps them again. For data read once, such as weights packed elsewhere.
  void Release(size_t offset, size_t length) const;
  // Maps every page into this process now (reads a byte of each; pages not yet in the
  // page cache are read from disk), so that the first real pass over the data does not
  // stop on page faults.
  void Touch() const;

 private:
  void Reset();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole file into a string: a regular file, or a pipe or device (/dev/stdin,
// <(...)) until it ends. Throws Error naming the path: kNotFound when missing,
// kInvalidArgument for a folder, kTooLarge past `max_bytes` (a regular file before any
// of it is read), kIo when it cannot be read.
std::string ReadFileToString(const std::string& path, uint64_t max_bytes = UINT64_MAX);

// Writes `contents` to `path` atomically (temporary file in the same folder, fsync,
// rename). Throws Error(kIo) naming the path on failure, leaving any old file intact.
void WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace qvl
