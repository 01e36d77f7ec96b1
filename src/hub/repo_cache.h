// The Hugging Face hub cache layout for one model repository, byte for byte as
// huggingface_hub writes it, so downloads are shared with Python tools both ways:
//
//   <cache>/models--ORG--NAME/blobs/<etag>                file contents, named by ETag
//                            /snapshots/<commit>/<file>   relative symlink ../../blobs/<etag>
//                            /refs/<revision>             the commit hash, no newline
//   <cache>/.locks/models--ORG--NAME/<etag>.lock          flock()ed while a blob is written
#pragma once

#include <string>

namespace qvl::hub {

// Throws kInvalidArgument unless repo_id is ORG/NAME made of letters, digits, '-', '_', '.'.
void ValidateRepoId(const std::string& repo_id);

// Throws kCorrupt unless `name` is a relative path inside a repository (no '..', no '\\').
void ValidateRepoFilename(const std::string& name);

// Throws kInvalidArgument unless `revision` can name a file under refs/.
void ValidateRevision(const std::string& revision);

// 40 lowercase hex digits.
bool IsCommitHash(const std::string& text);

// "models--ORG--NAME".
std::string RepoFolderName(const std::string& repo_id);

class RepoCache {
 public:
  RepoCache(const std::string& cache_dir, const std::string& repo_id);

  const std::string& cache_dir() const { return cache_dir_; }
  const std::string& dir() const { return dir_; }
  std::string BlobPath(const std::string& etag) const;
  std::string LockPath(const std::string& etag) const;
  std::string SnapshotDir(const std::string& commit) const;
  std::string SnapshotFile(const std::string& commit, const std::string& filename) const;

  // The commit `revision` points at: itself when it is a commit hash, else the content
  // of refs/<revision>; empty when the ref is not cached.
  std::string ResolveRevision(const std::string& revision) const;

  // Writes refs/<revision> atomically; nothing when revision is the commit itself.
  void WriteRef(const std::string& revision, const std::string& commit) const;

  // Creates blobs/ and the lock folder, and CACHEDIR.TAG at the cache root.
  void Prepare() const;

  // snapshots/<commit>/<filename> -> ../../blobs/<etag> (one more ../ per sub-folder).
  // Where the file system refuses symlinks the blob is copied instead.
  void LinkSnapshotFile(const std::string& commit, const std::string& filename,
                        const std::string& etag) const;

 private:
  std::string cache_dir_;
  std::string folder_name_;
  std::string dir_;
};

}  // namespace qvl::hub
