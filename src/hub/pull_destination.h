// Where a pull puts files: the Hugging Face cache (blobs, snapshot symlinks, refs) or a
// plain folder (--local-dir, with huggingface_hub's .cache/huggingface/download metadata
// so `hf download --local-dir` recognises the files and skips them).
#pragma once

#include <memory>
#include <string>

#include "hub/blob_download.h"

namespace qvl::hub {

class PullDestination {
 public:
  virtual ~PullDestination() = default;

  virtual void Prepare() = 0;
  // `filename` is in place for `commit` already: no request needed.
  virtual bool HasCurrent(const std::string& filename, const std::string& commit) const = 0;
  // Where a file that HasCurrent can be read.
  virtual std::string CurrentPath(const std::string& filename, const std::string& commit) const = 0;
  // The verified content of `file` is on disk (downloaded earlier, maybe by another tool).
  virtual bool HasContent(const RemoteFile& file) const = 0;
  // Where the verified content of `file` can be read before Place.
  virtual std::string ContentPath(const RemoteFile& file) const = 0;
  // Paths to download `file` to; final_path is ContentPath(file).
  virtual BlobTarget Target(const RemoteFile& file) const = 0;
  // Makes verified content visible under the file's name.
  virtual void Place(const RemoteFile& file) = 0;
  // Called once every file is placed.
  virtual void Commit(const std::string& revision, const std::string& commit) = 0;
  // The model folder the engine loads.
  virtual std::string FolderPath(const std::string& commit) const = 0;
};

std::unique_ptr<PullDestination> MakeCacheDestination(const std::string& cache_dir,
                                                      const std::string& repo);
std::unique_ptr<PullDestination> MakeLocalDestination(const std::string& dir);

}  // namespace qvl::hub
