// Downloads one file of a repository into a partial file, resumably and with several
// ranged requests at once for large files, then checks it against the hub's checksum and
// renames it into place. A note beside the partial file ("<partial>.segments") records how
// many bytes of each range are on disk, so an interrupted download (Ctrl-C, lost network,
// crash) continues where it stopped on the next run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hub/file_lock.h"
#include "hub/hub_api.h"
#include "hub/transfer_progress.h"

namespace qvl::hub {

struct BlobTarget {
  RemoteFile file;
  std::string partial_path;  // where bytes are written while downloading
  std::string final_path;    // where the verified file is renamed to
  std::string lock_path;     // flock()ed from construction to destruction
  // A partial file an older huggingface_hub left (a plain prefix of the file), adopted
  // when partial_path does not exist yet.
  std::string legacy_partial_path;
};

// What a worker thread brings to FetchSegment.
struct SegmentContext {
  HttpSession* session = nullptr;
  const HubAccess* access = nullptr;
  std::string repo;
  TransferProgress* progress = nullptr;
  // Asks the hub again for the file's URL, when a signed CDN URL has expired.
  std::function<RemoteFile(HttpSession&)> refresh;
};

class BlobDownload {
 public:
  // Takes the lock, then continues what an earlier run left or starts afresh; the bytes
  // left are split into at most max_segments ranges of at least min_segment_bytes.
  BlobDownload(BlobTarget target, int max_segments, uint64_t min_segment_bytes);
  ~BlobDownload();
  BlobDownload(const BlobDownload&) = delete;
  BlobDownload& operator=(const BlobDownload&) = delete;

  const RemoteFile& file() const { return target_.file; }
  const std::string& final_path() const { return target_.final_path; }
  // Another process finished this file while we waited for the lock.
  bool already_complete() const { return already_complete_; }
  uint64_t resumed_bytes() const { return resumed_bytes_; }
  // Disk space the rest of the download still has to allocate.
  uint64_t bytes_to_allocate() const;
  int segment_count() const { return static_cast<int>(segments_.size()); }

  // Fetches range `index` with retries; thread-safe for distinct indices. True when this
  // call completed the last missing range (the caller then calls Finish).
  bool FetchSegment(int index, const SegmentContext& context);

  // Checks size and checksum, then renames the partial file to final_path.
  void Finish();

 private:
  struct Segment {
    uint64_t start;
    uint64_t end;
  };
  void FetchRange(int index, const SegmentContext& context);
  bool LoadState();
  void StartFresh(uint64_t prefix, int max_segments, uint64_t min_segment_bytes);
  // Both return 0 or an errno: they run inside libcurl callbacks, which must not throw.
  int SaveState();
  int MaybeSaveState();
  std::string StatePath() const { return target_.partial_path + ".segments"; }
  [[noreturn]] void FailWrite(int error) const;

  BlobTarget target_;
  std::unique_ptr<FileLock> lock_;
  int fd_ = -1;
  bool already_complete_ = false;
  uint64_t resumed_bytes_ = 0;
  std::vector<Segment> segments_;
  std::unique_ptr<std::atomic<uint64_t>[]> done_;
  std::atomic<int> finished_segments_{0};
  std::mutex state_mu_;
  std::chrono::steady_clock::time_point last_save_;
  std::mutex url_mu_;
};

}  // namespace qvl::hub
