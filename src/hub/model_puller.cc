#include "hub/model_puller.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "hub/blob_download.h"
#include "hub/content_digest.h"
#include "hub/hub_environment.h"
#include "hub/model_resolver.h"
#include "hub/pull_destination.h"
#include "hub/repo_cache.h"

namespace qvl::hub {
namespace {

// Runs task(i, session) for every i in [0, count) on up to `jobs` threads with one HTTP
// session each. The first error stops the other transfers and is rethrown.
void RunOnWorkers(size_t count, int jobs, const PullOptions& options,
                  const std::function<void(size_t, HttpSession&)>& task) {
  std::atomic<bool> failed{false};
  std::atomic<size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mu;
  auto work = [&] {
    try {
      HttpSession session(options.network, CancelFlags{options.cancel, &failed});
      while (!failed.load()) {
        const size_t i = next.fetch_add(1);
        if (i >= count) break;
        task(i, session);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!first_error) first_error = std::current_exception();
      failed = true;
    }
  };
  const size_t threads = std::min<size_t>(count, static_cast<size_t>(std::max(1, jobs)));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  if (threads > 0) work();
  for (std::thread& worker : workers) worker.join();
  if (first_error) std::rethrow_exception(first_error);
}

class Puller {
 public:
  explicit Puller(const PullOptions& options) : options_(options) {
    access_.endpoint = HubEndpoint(options.endpoint);
    access_.token_hint = options.token_hint;
    SetHubToken(&access_, HubToken(options.token));
    access_.network = options.network;
    access_.retry = options.retry;
    destination_ =
        options.local_dir.empty()
            ? MakeCacheDestination(options.cache_dir.empty() ? HubCacheDir() : options.cache_dir,
                                   options.repo)
            : MakeLocalDestination(options.local_dir);
  }

  // The revision's commit and file list, from the hub.
  RepoRevision LookUp() {
    HttpSession session(options_.network, CancelFlags{options_.cancel, nullptr});
    return FetchRepoRevision(session, access_, options_.repo, options_.revision);
  }

  PullResult Run(const RepoRevision& revision) {
    const auto start = std::chrono::steady_clock::now();
    commit_ = revision.commit;
    std::vector<std::string> names = SelectModelFiles(revision.files, options_.repo);
    destination_->Prepare();
    const auto index = std::find(names.begin(), names.end(), kWeightsIndexFile);
    if (index != names.end()) {
      // The shard list is inside the index, so the index comes first.
      names.erase(index);
      const std::vector<std::string> shards = ReadShardList(Fetch({kWeightsIndexFile})[0]);
      names.insert(names.end(), shards.begin(), shards.end());
    }
    Fetch(names);
    // config.json goes last: a folder that has it has everything this pull placed.
    std::stable_partition(to_place_.begin(), to_place_.end(),
                          [](const RemoteFile& file) { return file.name != kConfigFile; });
    for (const RemoteFile& file : to_place_) destination_->Place(file);
    destination_->Commit(options_.revision, commit_);

    result_.path = destination_->FolderPath(commit_);
    result_.commit = commit_;
    const std::vector<std::string> missing = MissingModelFiles(result_.path);
    if (!missing.empty()) {
      Fail(ErrorCode::kCorrupt, result_.path, " lacks ", missing.front(), " after downloading ",
           options_.repo);
    }
    // Only here, with every file verified and placed, is the pull "downloaded".
    if (options_.progress != ProgressStyle::kQuiet && result_.files_downloaded > 0) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double bytes = static_cast<double>(result_.bytes_downloaded);
      LogInfo("downloaded ", options_.repo, ": ", result_.files_downloaded, " files, ",
              FormatBytes(bytes), " in ", FormatDuration(seconds), " (",
              FormatBytes(seconds > 0 ? bytes / seconds : 0), "/s)");
    }
    return result_;
  }

 private:
  // Makes `names` available and returns where each one's content can be read now.
  std::vector<std::string> Fetch(const std::vector<std::string>& names) {
    std::vector<std::string> paths(names.size());
    std::vector<size_t> pending;
    for (size_t i = 0; i < names.size(); ++i) {
      ValidateRepoFilename(names[i]);
      ++result_.files;
      if (destination_->HasCurrent(names[i], commit_)) {
        paths[i] = destination_->CurrentPath(names[i], commit_);
      } else {
        pending.push_back(i);
      }
    }
    std::vector<RemoteFile> remote(pending.size());
    RunOnWorkers(pending.size(), options_.jobs, options_, [&](size_t i, HttpSession& session) {
      remote[i] = FetchFileMetadata(session, access_, options_.repo, commit_, names[pending[i]]);
    });
    Download(remote);
    for (size_t i = 0; i < pending.size(); ++i) {
      paths[pending[i]] = destination_->ContentPath(remote[i]);
      to_place_.push_back(remote[i]);
    }
    return paths;
  }

  void Download(const std::vector<RemoteFile>& files) {
    // Keyed by final path: two names with the same content share one blob download.
    std::map<std::string, std::unique_ptr<BlobDownload>> by_path;
    for (const RemoteFile& file : files) {
      if (destination_->HasContent(file)) continue;
      BlobTarget target = destination_->Target(file);
      if (by_path.count(target.final_path)) continue;
      if (DigestKindOfEtag(file.etag) == DigestKind::kNone) {
        LogWarn("no checksum for ", file.name, " of ", options_.repo, ": ", access_.endpoint,
                " gives its ETag as '", file.etag,
                "', neither a sha256 nor a git blob id, so only its size will be checked");
      }
      const int max_segments = 4 * std::max(1, options_.jobs);
      auto download =
          std::make_unique<BlobDownload>(target, max_segments, options_.min_segment_bytes);
      if (!download->already_complete()) by_path[target.final_path] = std::move(download);
    }
    if (by_path.empty()) return;
    std::vector<BlobDownload*> downloads;
    uint64_t total = 0, resumed = 0, to_allocate = 0;
    for (auto& [path, download] : by_path) {
      downloads.push_back(download.get());
      total += download->file().size;
      resumed += download->resumed_bytes();
      to_allocate += download->bytes_to_allocate();
    }
    CheckDiskSpace(by_path.begin()->first, to_allocate);
    std::sort(downloads.begin(), downloads.end(),
              [](BlobDownload* a, BlobDownload* b) { return a->file().size > b->file().size; });
    std::vector<std::pair<BlobDownload*, int>> tasks;
    for (BlobDownload* download : downloads) {
      if (download->segment_count() == 0) download->Finish();
      for (int s = 0; s < download->segment_count(); ++s) tasks.emplace_back(download, s);
    }
    TransferProgress progress(options_.progress, options_.repo, total, resumed,
                              static_cast<int>(downloads.size()));
    RunOnWorkers(tasks.size(), options_.jobs, options_, [&](size_t i, HttpSession& session) {
      BlobDownload* download = tasks[i].first;
      SegmentContext context;
      context.session = &session;
      context.access = &access_;
      context.repo = options_.repo;
      context.progress = &progress;
      context.refresh = [this, download](HttpSession& s) {
        return FetchFileMetadata(s, access_, options_.repo, commit_, download->file().name);
      };
      if (download->FetchSegment(tasks[i].second, context)) {
        download->Finish();
        progress.FileDone(download->file().name, download->file().size);
      }
    });
    progress.Finish();
    result_.files_downloaded += static_cast<int>(downloads.size());
    result_.bytes_downloaded += progress.received();
  }

  static void CheckDiskSpace(const std::string& path, uint64_t needed) {
    const std::string dir = path.substr(0, path.rfind('/'));
    struct statvfs info;
    if (statvfs(dir.c_str(), &info) != 0) return;
    const uint64_t free_bytes = static_cast<uint64_t>(info.f_bavail) * info.f_frsize;
    if (needed > free_bytes) {
      Fail(ErrorCode::kIo, "disk full: ", dir, " has ",
           FormatBytes(static_cast<double>(free_bytes)), " free but the download needs ",
           FormatBytes(static_cast<double>(needed)),
           " more; free some space or point HF_HUB_CACHE (or --local-dir) at another disk");
    }
  }

  const PullOptions& options_;
  HubAccess access_;
  std::unique_ptr<PullDestination> destination_;
  std::string commit_;
  std::vector<RemoteFile> to_place_;
  PullResult result_;
};

std::string RevisionSuffix(const PullOptions& options) {
  return options.revision == "main" ? std::string() : " (revision " + options.revision + ")";
}

// What is on disk already of options.repo@revision, without the network: the complete
// cache snapshot (or --local-dir); an empty path when it is not complete, with `missing`
// saying what is not there.
PullResult FindOnDisk(const PullOptions& options, std::string* missing) {
  PullResult result;
  if (!options.local_dir.empty()) {
    const std::vector<std::string> lacking = MissingModelFiles(options.local_dir);
    if (!lacking.empty()) {
      *missing = StrCat(options.local_dir, " lacks ", lacking.front(), " of ", options.repo,
                        RevisionSuffix(options));
      return result;
    }
    result.path = options.local_dir;
    return result;
  }
  const std::string cache_dir = options.cache_dir.empty() ? HubCacheDir() : options.cache_dir;
  result.path = FindCachedModel(cache_dir, options.repo, options.revision);
  if (result.path.empty()) {
    *missing = StrCat(options.repo, RevisionSuffix(options),
                      " is not complete in the Hugging Face cache at ", cache_dir);
    return result;
  }
  result.commit = result.path.substr(result.path.rfind('/') + 1);
  return result;
}

// HF_HUB_OFFLINE: what is on disk already, without the network (as huggingface_hub's
// snapshot_download does), so an unreachable hub or a bad token does not matter.
PullResult FindOffline(const PullOptions& options) {
  std::string missing;
  PullResult result = FindOnDisk(options, &missing);
  if (result.path.empty()) {
    Fail(ErrorCode::kNotFound, "HF_HUB_OFFLINE is set and ", missing,
         ": unset HF_HUB_OFFLINE to download it");
  }
  LogInfo("HF_HUB_OFFLINE is set: ", options.repo, RevisionSuffix(options), " is complete in ",
          result.path, "; nothing was downloaded");
  return result;
}

// huggingface_hub's snapshot_download answers a failed revision lookup (no network, a
// timeout, an HTTP error such as 5xx, 429 or 401) with the snapshot it has on disk; so
// does qvl pull, but only when that snapshot is complete, and it says so in a warning
// with the hub's error, so that a stale or partial folder never passes silently. A
// revision or repository the hub says does not exist, and an interrupted pull, stay
// errors.
bool UseOnDiskAfter(const Error& error, const PullOptions& options) {
  return (error.code() == ErrorCode::kIo || error.code() == ErrorCode::kUnavailable ||
          error.code() == ErrorCode::kUnauthenticated) &&
         !(options.cancel != nullptr && options.cancel->load());
}

}  // namespace

PullResult PullModel(const PullOptions& options) {
  ValidateRepoId(options.repo);
  ValidateRevision(options.revision);
  if (HubOffline()) return FindOffline(options);
  Puller puller(options);
  RepoRevision revision;
  try {
    revision = puller.LookUp();
  } catch (const Error& e) {
    if (!UseOnDiskAfter(e, options)) throw;
    std::string missing;
    PullResult on_disk = FindOnDisk(options, &missing);
    if (on_disk.path.empty()) throw;
    LogWarn(e.what(), ". Using ", options.repo, RevisionSuffix(options), " as it is complete in ",
            on_disk.path, " (set HF_HUB_OFFLINE=1 to skip the hub)");
    return on_disk;
  }
  return puller.Run(revision);
}

}  // namespace qvl::hub
