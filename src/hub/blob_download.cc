#include "hub/blob_download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/log.h"
#include "hub/content_digest.h"

namespace qvl::hub {
namespace {

constexpr char kStateMagic[] = "qvl-segments 1";
constexpr std::chrono::seconds kStateSaveInterval{2};

bool FileExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

// "bytes 100-199/1000" -> 100.
bool ParseContentRangeStart(const std::string& value, uint64_t* start) {
  unsigned long long first = 0;
  if (std::sscanf(value.c_str(), "bytes %llu-", &first) != 1) return false;
  *start = first;
  return true;
}

std::string FreeSpace(const std::string& path) {
  const std::string dir = path.substr(0, path.rfind('/'));
  struct statvfs info;
  if (statvfs(dir.c_str(), &info) != 0) return "unknown";
  return FormatBytes(static_cast<double>(info.f_bavail) * static_cast<double>(info.f_frsize));
}

[[noreturn]] void FailInterrupted(const std::string& name) {
  Fail(ErrorCode::kUnavailable, "download of ", name,
       " was interrupted; run the command again to resume it");
}

}  // namespace

BlobDownload::BlobDownload(BlobTarget target, int max_segments, uint64_t min_segment_bytes)
    : target_(std::move(target)) {
  lock_ = std::make_unique<FileLock>(target_.lock_path);
  if (FileExists(target_.final_path)) {
    already_complete_ = true;
    return;
  }
  if (!FileExists(target_.partial_path) && !target_.legacy_partial_path.empty() &&
      FileExists(target_.legacy_partial_path)) {
    std::rename(target_.legacy_partial_path.c_str(), target_.partial_path.c_str());
  }
  const bool had_partial = FileExists(target_.partial_path);
  const bool had_state = FileExists(StatePath());
  fd_ = open(target_.partial_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) FailWrite(errno);
  if (had_partial && had_state && LoadState()) return;
  uint64_t prefix = 0;
  struct stat info;
  // Without a note, a partial file is a plain prefix, as older huggingface_hub wrote them.
  if (had_partial && !had_state && fstat(fd_, &info) == 0 &&
      static_cast<uint64_t>(info.st_size) <= target_.file.size) {
    prefix = static_cast<uint64_t>(info.st_size);
  }
  StartFresh(prefix, max_segments, min_segment_bytes);
}

BlobDownload::~BlobDownload() {
  if (fd_ >= 0) close(fd_);
}

bool BlobDownload::LoadState() {
  std::ifstream in(StatePath());
  std::string header;
  uint64_t size = 0;
  if (!std::getline(in, header) || header.rfind(kStateMagic, 0) != 0) return false;
  std::istringstream(header.substr(sizeof(kStateMagic) - 1)) >> size;
  if (size != target_.file.size) return false;
  std::vector<Segment> segments;
  std::vector<uint64_t> done;
  uint64_t start = 0, end = 0, got = 0, expected_start = 0;
  while (in >> start >> end >> got) {
    if (start != expected_start || end <= start || end > size || got > end - start) return false;
    segments.push_back({start, end});
    done.push_back(got);
    expected_start = end;
  }
  if (expected_start != size) return false;
  segments_ = std::move(segments);
  done_ = std::make_unique<std::atomic<uint64_t>[]>(segments_.size());
  for (size_t i = 0; i < segments_.size(); ++i) {
    done_[i] = done[i];
    resumed_bytes_ += done[i];
  }
  last_save_ = std::chrono::steady_clock::now();
  return true;
}

void BlobDownload::StartFresh(uint64_t prefix, int max_segments, uint64_t min_segment_bytes) {
  const uint64_t size = target_.file.size;
  struct stat info;
  if (fstat(fd_, &info) == 0 && static_cast<uint64_t>(info.st_size) > prefix &&
      ftruncate(fd_, static_cast<off_t>(prefix)) != 0) {
    FailWrite(errno);
  }
  // Reserving the space up front turns a full disk into an error now, not after an hour.
  if (size > prefix &&
      fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(prefix),
                static_cast<off_t>(size - prefix)) != 0 &&
      errno == ENOSPC) {
    FailWrite(ENOSPC);
  }
  segments_.clear();
  if (prefix > 0) segments_.push_back({0, prefix});
  const uint64_t left = size - prefix;
  const uint64_t min_bytes = std::max<uint64_t>(1, min_segment_bytes);
  const uint64_t count =
      left == 0 ? 0 : std::clamp<uint64_t>(left / min_bytes, 1, std::max(1, max_segments));
  for (uint64_t i = 0; i < count; ++i) {
    segments_.push_back({prefix + left * i / count, prefix + left * (i + 1) / count});
  }
  done_ = std::make_unique<std::atomic<uint64_t>[]>(segments_.size());
  for (size_t i = 0; i < segments_.size(); ++i) done_[i] = 0;
  if (prefix > 0) done_[0] = prefix;
  resumed_bytes_ = prefix;
  if (const int error = SaveState()) FailWrite(error);
}

int BlobDownload::SaveState() {
  std::ostringstream text;
  text << kStateMagic << " " << target_.file.size << "\n";
  for (size_t i = 0; i < segments_.size(); ++i) {
    text << segments_[i].start << " " << segments_[i].end << " " << done_[i].load() << "\n";
  }
  const std::string path = StatePath();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    if (!out.flush()) return errno != 0 ? errno : EIO;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return errno;
  last_save_ = std::chrono::steady_clock::now();
  return 0;
}

int BlobDownload::MaybeSaveState() {
  std::unique_lock<std::mutex> lock(state_mu_, std::try_to_lock);
  if (lock.owns_lock() && std::chrono::steady_clock::now() - last_save_ >= kStateSaveInterval) {
    return SaveState();
  }
  return 0;
}

uint64_t BlobDownload::bytes_to_allocate() const {
  struct stat info;
  if (already_complete_ || fd_ < 0 || fstat(fd_, &info) != 0) return 0;
  const uint64_t allocated = static_cast<uint64_t>(info.st_blocks) * 512;
  return allocated >= target_.file.size ? 0 : target_.file.size - allocated;
}

void BlobDownload::FailWrite(int error) const {
  if (error == ENOSPC || error == EDQUOT) {
    Fail(ErrorCode::kIo, "disk full: cannot write ", target_.partial_path, " (", target_.file.name,
         ", ", FormatBytes(static_cast<double>(target_.file.size)), "; ",
         FreeSpace(target_.partial_path),
         " free); free some space or point HF_HUB_CACHE (or --local-dir) at another disk");
  }
  Fail(ErrorCode::kIo, "cannot write ", target_.partial_path, ": ", std::strerror(error));
}

bool BlobDownload::FetchSegment(int index, const SegmentContext& context) {
  try {
    FetchRange(index, context);
  } catch (...) {
    // What arrived stays usable: the next run resumes from here.
    std::lock_guard<std::mutex> lock(state_mu_);
    SaveState();
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (const int error = SaveState()) FailWrite(error);
  }
  return finished_segments_.fetch_add(1) + 1 == segment_count();
}

void BlobDownload::FetchRange(int index, const SegmentContext& context) {
  const uint64_t start = segments_[index].start;
  const uint64_t length = segments_[index].end - start;
  const uint64_t size = target_.file.size;
  std::atomic<uint64_t>& done = done_[index];
  const std::string& name = target_.file.name;
  int failures = 0;
  bool refreshed = false;
  while (done.load() < length) {
    if (context.session->cancel().cancelled()) FailInterrupted(name);
    const uint64_t offset = start + done.load();
    HttpRequest request;
    bool send_token;
    {
      std::lock_guard<std::mutex> lock(url_mu_);
      request.url = target_.file.url;
      send_token = target_.file.send_token;
    }
    request.follow_redirects = true;
    request.headers = HubHeaders(*context.access, send_token);
    if (offset > 0 || start + length < size) {
      request.headers.push_back(StrCat("Range: bytes=", offset, "-", start + length - 1));
    }
    uint64_t skip = 0;
    bool wrong_range = false;
    int write_error = 0;
    request.on_start = [&](long status, const HttpHeaders& headers) {
      if (status != 206) {
        skip = offset;  // the server ignored Range and sends the whole file
        return true;
      }
      uint64_t range_start = 0;
      wrong_range = !ParseContentRangeStart(headers.Get("Content-Range"), &range_start) ||
                    range_start != offset;
      return !wrong_range;
    };
    request.on_body = [&](const char* data, size_t bytes) {
      const size_t dropped = static_cast<size_t>(std::min<uint64_t>(skip, bytes));
      skip -= dropped;
      data += dropped;
      bytes = static_cast<size_t>(std::min<uint64_t>(bytes - dropped, length - done.load()));
      const uint64_t at = start + done.load();
      for (size_t written = 0; written < bytes;) {
        const ssize_t n =
            pwrite(fd_, data + written, bytes - written, static_cast<off_t>(at + written));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          write_error = n < 0 ? errno : EIO;
          return false;
        }
        written += static_cast<size_t>(n);
      }
      done += bytes;
      context.progress->Add(static_cast<int64_t>(bytes));
      write_error = MaybeSaveState();
      return write_error == 0 && done.load() < length;
    };
    const uint64_t before = done.load();
    const HttpResponse response = context.session->Send(request);
    if (write_error != 0) FailWrite(write_error);
    if (done.load() >= length) break;
    if (wrong_range) {
      Fail(ErrorCode::kCorrupt, UrlOrigin(request.url), " answered a request for bytes ", offset,
           "- of ", name, " with a different range");
    }
    if (context.session->cancel().cancelled()) FailInterrupted(name);
    if (done.load() > before) failures = 0;
    const bool refused =
        response.transport == Transport::kOk && (response.status == 401 || response.status == 403 ||
                                                 response.status == 404 || response.status == 410);
    if (refused && !send_token && !refreshed && context.refresh) {
      // Signed CDN URLs expire; the hub hands out a fresh one for the same content.
      refreshed = true;
      RemoteFile fresh = context.refresh(*context.session);
      if (fresh.etag != target_.file.etag) {
        Fail(ErrorCode::kUnavailable, name, " of ", context.repo,
             " changed on the hub during the download; run the command again");
      }
      std::lock_guard<std::mutex> lock(url_mu_);
      target_.file.url = fresh.url;
      target_.file.send_token = fresh.send_token;
      continue;
    }
    const bool cut_short =
        response.transport == Transport::kOk && response.status >= 200 && response.status < 300;
    if (!cut_short && !response.Transient()) {
      FailForResponse(response, *context.access, context.repo, "file " + name);
    }
    if (++failures >= context.access->retry.max_attempts) {
      if (cut_short) {
        Fail(ErrorCode::kIo, "download of ", name, " from ", UrlOrigin(request.url),
             " keeps ending early (", context.access->retry.max_attempts, " attempts)");
      }
      FailForResponse(response, *context.access, context.repo, "file " + name);
    }
    const double wait = RetryDelaySeconds(context.access->retry, failures, response);
    context.progress->Note(StrCat(
        "retrying ", name, " from byte ", start + done.load(), " in ", FormatWait(wait), " (",
        cut_short ? StrCat("HTTP ", response.status, " ended early") : DescribeFailure(response),
        "; attempt ", failures + 1, " of ", context.access->retry.max_attempts, ")"));
    if (!WaitBeforeRetry(wait, context.session->cancel())) {
      FailInterrupted(name);
    }
  }
}

void BlobDownload::Finish() {
  if (already_complete_) return;
  const RemoteFile& file = target_.file;
  struct stat info;
  if (fstat(fd_, &info) != 0 || static_cast<uint64_t>(info.st_size) != file.size) {
    unlink(target_.partial_path.c_str());
    unlink(StatePath().c_str());
    Fail(ErrorCode::kCorrupt, target_.partial_path, " held ", info.st_size, " bytes instead of ",
         file.size, " for ", file.name, "; it was deleted, run the command again");
  }
  // The checksum is what makes the blob trustworthy later, so the bytes must be durable
  // before the rename publishes them.
  if (fdatasync(fd_) != 0) FailWrite(errno);
  const DigestKind kind = DigestKindOfEtag(file.etag);
  const std::string digest = DigestOfFile(kind, target_.partial_path, file.size);
  if (kind != DigestKind::kNone && !DigestMatchesEtag(digest, file.etag)) {
    unlink(target_.partial_path.c_str());
    unlink(StatePath().c_str());
    Fail(ErrorCode::kCorrupt, "checksum mismatch for ", file.name, ": the hub publishes ",
         DigestKindName(kind), " ", file.etag, " but the download has ", digest,
         "; the partial file was deleted, run the command again");
  }
  close(fd_);
  fd_ = -1;
  if (std::rename(target_.partial_path.c_str(), target_.final_path.c_str()) != 0) {
    Fail(ErrorCode::kIo, "cannot move ", target_.partial_path, " to ", target_.final_path, ": ",
         std::strerror(errno));
  }
  unlink(StatePath().c_str());
}

}  // namespace qvl::hub
