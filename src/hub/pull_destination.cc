#include "hub/pull_destination.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "base/error.h"
#include "hub/repo_cache.h"

namespace qvl::hub {
namespace fs = std::filesystem;
namespace {

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

void MakeParentDirs(const std::string& path) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  if (error) Fail(ErrorCode::kIo, "cannot create folder for ", path, ": ", error.message());
}

class CacheDestination : public PullDestination {
 public:
  CacheDestination(const std::string& cache_dir, const std::string& repo)
      : cache_(cache_dir, repo) {}

  void Prepare() override { cache_.Prepare(); }

  bool HasCurrent(const std::string& filename, const std::string& commit) const override {
    return Exists(cache_.SnapshotFile(commit, filename));
  }

  std::string CurrentPath(const std::string& filename, const std::string& commit) const override {
    return cache_.SnapshotFile(commit, filename);
  }

  bool HasContent(const RemoteFile& file) const override {
    return Exists(cache_.BlobPath(file.etag));
  }

  std::string ContentPath(const RemoteFile& file) const override {
    return cache_.BlobPath(file.etag);
  }

  BlobTarget Target(const RemoteFile& file) const override {
    BlobTarget target;
    target.file = file;
    target.final_path = cache_.BlobPath(file.etag);
    // Not huggingface_hub's "<etag>.incomplete": ours may have holes (ranges fetched in
    // parallel), which an older huggingface_hub would take for a prefix and resume.
    target.partial_path = target.final_path + ".qvl.incomplete";
    target.legacy_partial_path = target.final_path + ".incomplete";
    target.lock_path = cache_.LockPath(file.etag);
    return target;
  }

  void Place(const RemoteFile& file) override {
    cache_.LinkSnapshotFile(file.commit, file.name, file.etag);
  }

  void Commit(const std::string& revision, const std::string& commit) override {
    cache_.WriteRef(revision, commit);
  }

  std::string FolderPath(const std::string& commit) const override {
    return cache_.SnapshotDir(commit);
  }

 private:
  RepoCache cache_;
};

// Metadata file format of huggingface_hub's _local_folder.py: commit, etag, timestamp.
class LocalDestination : public PullDestination {
 public:
  explicit LocalDestination(const std::string& dir)
      : dir_(dir), meta_dir_(dir + "/.cache/huggingface/download") {}

  void Prepare() override {
    std::error_code error;
    fs::create_directories(meta_dir_, error);
    if (error) Fail(ErrorCode::kIo, "cannot create folder ", meta_dir_, ": ", error.message());
    const std::string ignore = dir_ + "/.cache/huggingface/.gitignore";
    if (!Exists(ignore)) std::ofstream(ignore) << "*";
  }

  bool HasCurrent(const std::string& filename, const std::string& commit) const override {
    const Metadata meta = ReadMetadata(filename);
    return meta.valid && meta.commit == commit;
  }

  std::string CurrentPath(const std::string& filename, const std::string&) const override {
    return dir_ + "/" + filename;
  }

  bool HasContent(const RemoteFile& file) const override {
    const Metadata meta = ReadMetadata(file.name);
    return (meta.valid && meta.etag == file.etag) || Exists(StagedPath(file));
  }

  std::string ContentPath(const RemoteFile& file) const override {
    const std::string staged = StagedPath(file);
    return Exists(staged) ? staged : dir_ + "/" + file.name;
  }

  BlobTarget Target(const RemoteFile& file) const override {
    BlobTarget target;
    target.file = file;
    target.final_path = StagedPath(file);
    target.partial_path = StrCat(meta_dir_, "/", file.name, ".", file.etag, ".qvl.incomplete");
    target.lock_path = StrCat(meta_dir_, "/", file.name, ".lock");
    MakeParentDirs(target.partial_path);
    return target;
  }

  void Place(const RemoteFile& file) override {
    const std::string path = dir_ + "/" + file.name;
    const std::string staged = StagedPath(file);
    if (Exists(staged)) {
      MakeParentDirs(path);
      if (std::rename(staged.c_str(), path.c_str()) != 0) {
        Fail(ErrorCode::kIo, "cannot move ", staged, " to ", path, ": ", std::strerror(errno));
      }
    }
    const std::string meta_path = MetadataPath(file.name);
    MakeParentDirs(meta_path);
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::ofstream out(meta_path, std::ios::trunc);
    out << file.commit << "\n"
        << file.etag << "\n"
        << std::fixed << std::setprecision(6) << now << "\n";
    if (!out.flush()) Fail(ErrorCode::kIo, "cannot write ", meta_path, ": ", std::strerror(errno));
  }

  void Commit(const std::string&, const std::string&) override {}

  std::string FolderPath(const std::string&) const override { return dir_; }

 private:
  struct Metadata {
    bool valid = false;
    std::string commit;
    std::string etag;
  };

  std::string MetadataPath(const std::string& filename) const {
    return meta_dir_ + "/" + filename + ".metadata";
  }

  std::string StagedPath(const RemoteFile& file) const {
    return StrCat(meta_dir_, "/", file.name, ".", file.etag, ".qvl.ready");
  }

  // Valid only while the file is unchanged since the metadata was written, as
  // huggingface_hub decides (1 s of slack for coarse mtimes).
  Metadata ReadMetadata(const std::string& filename) const {
    Metadata meta;
    std::ifstream in(MetadataPath(filename));
    double timestamp = 0;
    if (!(in >> meta.commit >> meta.etag >> timestamp)) return meta;
    struct stat info;
    if (stat((dir_ + "/" + filename).c_str(), &info) != 0) return meta;
    meta.valid = static_cast<double>(info.st_mtim.tv_sec) - 1 <= timestamp;
    return meta;
  }

  std::string dir_;
  std::string meta_dir_;
};

}  // namespace

std::unique_ptr<PullDestination> MakeCacheDestination(const std::string& cache_dir,
                                                      const std::string& repo) {
  return std::make_unique<CacheDestination>(cache_dir, repo);
}

std::unique_ptr<PullDestination> MakeLocalDestination(const std::string& dir) {
  return std::make_unique<LocalDestination>(dir);
}

}  // namespace qvl::hub
