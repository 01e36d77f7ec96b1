#include "hub/model_resolver.h"

#include <sys/stat.h>

#include <filesystem>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "hub/hub_environment.h"
#include "hub/model_files.h"
#include "hub/repo_cache.h"

namespace qvl::hub {
namespace {

// A spec that can only be meant as a path: ./x, /x, ~/x, x/, a/b/c.
bool LooksLikePath(const std::string& spec) {
  size_t slashes = 0;
  for (char c : spec) slashes += c == '/';
  return spec.front() == '/' || spec.front() == '.' || spec.front() == '~' || spec.back() == '/' ||
         slashes != 1;
}

}  // namespace

std::string FindCachedModel(const std::string& cache_dir, const std::string& repo,
                            const std::string& revision) {
  const RepoCache cache(cache_dir, repo);
  const std::string commit = cache.ResolveRevision(revision);
  if (commit.empty()) return std::string();
  const std::string folder = cache.SnapshotDir(commit);
  return MissingModelFiles(folder).empty() ? folder : std::string();
}

std::string ResolveLocalModel(const std::string& spec, const ResolveOptions& options) {
  if (spec.empty()) Fail(ErrorCode::kInvalidArgument, "no model given: pass a folder or ORG/NAME");
  struct stat info;
  if (stat(spec.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) {
      Fail(ErrorCode::kInvalidArgument, "model ", spec,
           " is a file; pass the folder that holds config.json and the weights");
    }
    return spec;
  }
  if (LooksLikePath(spec)) Fail(ErrorCode::kNotFound, "model folder ", spec, " does not exist");
  ValidateRepoId(spec);
  const PullOptions& pull = options.pull;
  ValidateRevision(pull.revision);
  const std::string cache_dir = pull.cache_dir.empty() ? HubCacheDir() : pull.cache_dir;
  const std::string found = FindCachedModel(cache_dir, spec, pull.revision);
  if (!found.empty()) return found;

  const std::string revision = pull.revision == "main" ? "" : " --revision " + pull.revision;
  if (!options.allow_download || HubOffline()) {
    Fail(ErrorCode::kNotFound, "model ", spec, " is not in the Hugging Face cache at ", cache_dir,
         " and downloads are off (",
         options.allow_download ? "HF_HUB_OFFLINE" : options.downloads_off_by, "): run `qvl pull ",
         spec, revision, "` first, or pass a model folder");
  }
  return std::string();
}

std::string ResolveModel(const std::string& spec, const ResolveOptions& options) {
  const std::string local = ResolveLocalModel(spec, options);
  if (!local.empty()) return local;
  const PullOptions& pull = options.pull;
  const std::string cache_dir = pull.cache_dir.empty() ? HubCacheDir() : pull.cache_dir;
  LogInfo("model ", spec, " is not in the cache at ", cache_dir, "; downloading it");
  PullOptions request = pull;
  request.repo = spec;
  request.cache_dir = cache_dir;
  request.local_dir.clear();
  return PullModel(request).path;
}

std::string ServedModelId(const std::string& spec) {
  std::string path = spec;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat info;
  if (stat(path.c_str(), &info) != 0 && !LooksLikePath(path)) return path;  // ORG/NAME
  std::filesystem::path folder = std::filesystem::absolute(path).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "DIR/." -> "DIR/"
  const std::filesystem::path snapshots = folder.parent_path();
  const std::string repo_folder = snapshots.parent_path().filename().string();
  constexpr std::string_view kPrefix = "models--";
  if (snapshots.filename() == "snapshots" && repo_folder.rfind(kPrefix, 0) == 0) {
    const std::string encoded = repo_folder.substr(kPrefix.size());
    const size_t separator = encoded.find("--");
    if (separator != std::string::npos && separator > 0 && separator + 2 < encoded.size()) {
      return StrCat(encoded.substr(0, separator), "/", encoded.substr(separator + 2));
    }
  }
  return folder.filename().string();
}

}  // namespace qvl::hub
