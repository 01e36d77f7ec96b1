// Packed (quantized or repacked) linear weights of one model, kept in a cache file so a
// later start maps them instead of packing again (~1 s instead of tens of seconds for
// a 2B model).
//
// File: <dir>/<hash of the model folder path>-<formats>.qvlw. Its header names the
// model (size, mtime and a hash of the safetensors header of every weight file), the
// layout version and every entry (name, format, shape, offset); data is page-aligned.
// A file that is truncated, written by another version, or made for a model that has
// changed since is rebuilt. Writing goes to a temporary file renamed into place, so a
// failed write (disk full, read-only folder) leaves any old file usable and qvl packs
// in memory for this run instead; the temporary file of a writer that was killed is
// removed by the next Open of the folder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/thread_pool.h"
#include "model/safetensors.h"
#include "ops/linear.h"

namespace qvl {

// The default cache folder: $QVL_CACHE_DIR, else $XDG_CACHE_HOME/qvl, else
// ~/.cache/qvl; empty when none of these is set.
std::string DefaultWeightCacheDir();

// Identity of the checkpoint: for each weight file its name, size, modification time, a
// hash of its safetensors header and of 256 small windows spread over its data. Cheap:
// a few hundred page reads per file. A change confined to bytes between the windows
// under the same file times goes unseen.
uint64_t CheckpointKey(const TensorStore& store);

class PackedWeightCache {
 public:
  struct Entry {
    std::string name;  // checkpoint tensor name
    WeightView view;
    WeightFormat format;  // a packed format
  };

  // How Open found the cache.
  enum class Source { kMapped, kBuilt, kMemory };

  // Maps the cache file for `entries` in `dir` when it is valid, else packs the entries
  // (over `pool`), writes the file and maps it. With an empty `dir`, or when writing
  // fails, the entries are packed in memory (a warning names the reason).
  static std::unique_ptr<PackedWeightCache> Open(const std::string& dir,
                                                 const std::string& model_dir,
                                                 uint64_t checkpoint_key,
                                                 const std::vector<Entry>& entries,
                                                 ThreadPool& pool);

  // The packed weight of the checkpoint matrix at view.data in `format`, or an empty
  // LinearWeight when the cache does not hold it.
  LinearWeight Find(const WeightView& view, WeightFormat format) const;

  Source source() const { return source_; }
  // The file; empty for kMemory.
  std::string path() const { return file_ ? file_->path() : std::string(); }
  size_t bytes() const { return bytes_; }  // packed bytes of all entries
  // Maps every page of the cache file now (see MappedFile::Touch); a server does this
  // once it is ready, so that its first request does not pay the page faults.
  void Touch() const {
    if (file_) file_->Touch();
  }

 private:
  PackedWeightCache() = default;

  std::shared_ptr<MappedFile> file_;  // null when packed in memory
  Source source_ = Source::kMemory;
  size_t bytes_ = 0;
  std::unordered_map<const void*, std::vector<LinearWeight>> by_data_;
};

const char* PackedCacheSourceName(PackedWeightCache::Source source);

}  // namespace qvl
