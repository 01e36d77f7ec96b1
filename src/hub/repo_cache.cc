#include "hub/repo_cache.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace qvl::hub {
namespace fs = std::filesystem;
namespace {

bool IsRepoNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool ValidRepoPart(const std::string& part) {
  if (part.empty() || part.size() > 96) return false;
  for (char c : part) {
    if (!IsRepoNameChar(c)) return false;
  }
  if (part.find("--") != std::string::npos || part.find("..") != std::string::npos) return false;
  return part.front() != '-' && part.front() != '.' && part.back() != '-' && part.back() != '.';
}

// Every '/'-separated part is a plain name: not empty, not '.' or '..'.
bool IsPlainRelativePath(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string::npos ||
      path.find('\0') != std::string::npos) {
    return false;
  }
  std::istringstream parts(path);
  std::string part;
  int count = 0;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
    ++count;
  }
  return count > 0 && path.back() != '/';
}

void MakeDirs(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) Fail(ErrorCode::kIo, "cannot create folder ", dir, ": ", error.message());
}

}  // namespace

void ValidateRepoId(const std::string& repo_id) {
  const size_t slash = repo_id.find('/');
  if (slash == std::string::npos || !ValidRepoPart(repo_id.substr(0, slash)) ||
      !ValidRepoPart(repo_id.substr(slash + 1))) {
    Fail(ErrorCode::kInvalidArgument, "'", repo_id,
         "' is not a Hugging Face model name: expected ORG/NAME, e.g. Qwen/Qwen3-VL-2B-Instruct");
  }
}

void ValidateRepoFilename(const std::string& name) {
  if (!IsPlainRelativePath(name)) {
    Fail(ErrorCode::kCorrupt, "the hub listed a file named '", name,
         "', which is not a relative path inside the repository");
  }
}

void ValidateRevision(const std::string& revision) {
  bool printable = true;
  for (char c : revision) printable = printable && std::isgraph(static_cast<unsigned char>(c));
  if (!printable || !IsPlainRelativePath(revision)) {
    Fail(ErrorCode::kInvalidArgument, "'", revision,
         "' is not a revision: expected a branch, tag or commit hash such as main");
  }
}

bool IsCommitHash(const std::string& text) {
  if (text.size() != 40) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) ||
        std::isupper(static_cast<unsigned char>(c)))
      return false;
  }
  return true;
}

std::string RepoFolderName(const std::string& repo_id) {
  std::string name = "models--" + repo_id;
  for (size_t pos = name.find('/'); pos != std::string::npos; pos = name.find('/', pos)) {
    name.replace(pos, 1, "--");
  }
  return name;
}

RepoCache::RepoCache(const std::string& cache_dir, const std::string& repo_id)
    : cache_dir_(cache_dir), folder_name_(RepoFolderName(repo_id)) {
  ValidateRepoId(repo_id);
  dir_ = cache_dir_ + "/" + folder_name_;
}

std::string RepoCache::BlobPath(const std::string& etag) const { return dir_ + "/blobs/" + etag; }

std::string RepoCache::LockPath(const std::string& etag) const {
  return cache_dir_ + "/.locks/" + folder_name_ + "/" + etag + ".lock";
}

std::string RepoCache::SnapshotDir(const std::string& commit) const {
  return dir_ + "/snapshots/" + commit;
}

std::string RepoCache::SnapshotFile(const std::string& commit, const std::string& filename) const {
  return SnapshotDir(commit) + "/" + filename;
}

std::string RepoCache::ResolveRevision(const std::string& revision) const {
  if (IsCommitHash(revision)) return revision;
  std::ifstream file(dir_ + "/refs/" + revision);
  std::string commit;
  if (!file || !(file >> commit) || !IsCommitHash(commit)) return std::string();
  return commit;
}

void RepoCache::WriteRef(const std::string& revision, const std::string& commit) const {
  if (revision == commit || ResolveRevision(revision) == commit) return;
  const std::string path = dir_ + "/refs/" + revision;
  MakeDirs(fs::path(path).parent_path().string());
  const std::string tmp = StrCat(path, ".", getpid(), ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << commit;
    if (!out.flush()) Fail(ErrorCode::kIo, "cannot write ", tmp, ": ", std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    Fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(errno));
  }
}

void RepoCache::Prepare() const {
  MakeDirs(dir_ + "/blobs");
  MakeDirs(cache_dir_ + "/.locks/" + folder_name_);
  const std::string tag = cache_dir_ + "/CACHEDIR.TAG";
  if (!fs::exists(tag)) {
    // Backup tools skip folders holding this tag (https://bford.info/cachedir/).
    std::ofstream out(tag);
    out << "Signature: 8a477f597d28d172789f06886806bc55\n"
           "# This file is a cache directory tag for the Hugging Face hub cache.\n"
           "# For information about cache directory tags, see:\n"
           "#\thttps://bford.info/cachedir/\n";
  }
}

void RepoCache::LinkSnapshotFile(const std::string& commit, const std::string& filename,
                                 const std::string& etag) const {
  const std::string link = SnapshotFile(commit, filename);
  MakeDirs(fs::path(link).parent_path().string());
  std::string target = "../../";
  for (char c : filename) {
    if (c == '/') target += "../";
  }
  target += "blobs/" + etag;
  if (unlink(link.c_str()) != 0 && errno != ENOENT) {
    Fail(ErrorCode::kIo, "cannot replace ", link, ": ", std::strerror(errno));
  }
  if (symlink(target.c_str(), link.c_str()) == 0) return;
  if (errno != EPERM && errno != ENOTSUP) {
    Fail(ErrorCode::kIo, "cannot create symlink ", link, ": ", std::strerror(errno));
  }
  std::error_code error;
  fs::copy_file(BlobPath(etag), link, fs::copy_options::overwrite_existing, error);
  if (error)
    Fail(ErrorCode::kIo, "cannot copy ", BlobPath(etag), " to ", link, ": ", error.message());
}

}  // namespace qvl::hub
