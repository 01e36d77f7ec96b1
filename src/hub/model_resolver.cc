#include "hub/model_resolver.h"

#include <sys/stat.h>

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

std::string ResolveModel(const std::string& spec, const ResolveOptions& options) {
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
         " and downloads are off (", options.allow_download ? "HF_HUB_OFFLINE" : "--no-download",
         "): run `qvl pull ", spec, revision, "` first, or pass a model folder");
  }
  LogInfo("model ", spec, " is not in the cache at ", cache_dir, "; downloading it");
  PullOptions request = pull;
  request.repo = spec;
  request.cache_dir = cache_dir;
  request.local_dir.clear();
  return PullModel(request).path;
}

}  // namespace qvl::hub
