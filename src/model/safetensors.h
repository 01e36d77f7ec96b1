// Safetensors files, mapped and used in place (zero copy). Every header is validated
// before any tensor is touched: bounded length, well-formed JSON, known dtypes,
// dtype x shape = byte size, offsets inside the file, tensors not overlapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/dtype.h"
#include "base/mapped_file.h"

namespace qvl {

// "[2048, 6144]".
std::string FormatShape(const std::vector<int64_t>& shape);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // inside the mapped file
  size_t nbytes = 0;
  const std::string* file = nullptr;  // path of the file holding it, for messages

  int64_t numel() const;
  std::string ShapeString() const;  // "[2048, 6144]"
};

// The values of a small F32, BF16 or F16 tensor (norms, biases, scales) as float.
std::vector<float> FloatValues(const TensorInfo& t);
// The values of a small I32 or I64 tensor (a packed weight's weight_shape).
std::vector<int64_t> IntValues(const TensorInfo& t);

// Parses and validates the header of a safetensors image of `size` bytes at `data`.
// Throws Error(kCorrupt) naming `path` (and the tensor) on any problem.
std::vector<TensorInfo> ParseSafetensors(const uint8_t* data, size_t size, const std::string* path,
                                         std::map<std::string, std::string>* metadata);

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return *path_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorInfo* Find(std::string_view name) const;
  const MappedFile& mapped() const { return file_; }

 private:
  std::unique_ptr<std::string> path_;  // stable address for TensorInfo::file
  MappedFile file_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::unordered_map<std::string_view, size_t> by_name_;
};

// The weight files of a model folder: DIR/model.safetensors, or the shards named by
// DIR/model.safetensors.index.json in order of first mention. Throws Error(kNotFound)
// naming the folder or the missing shard, Error(kCorrupt) for a malformed index.
std::vector<std::string> FindWeightFiles(const std::string& dir);

// All weight files of a model folder: `model.safetensors`, or the shards listed by
// `model.safetensors.index.json` (each listed shard must exist and hold exactly the
// tensors the index assigns to it).
class TensorStore {
 public:
  static TensorStore OpenFolder(const std::string& dir);
  explicit TensorStore(const std::vector<std::string>& files);

  const TensorInfo* Find(std::string_view name) const;
  // Throws Error(kCorrupt) "WEIGHTS: tensor NAME is missing" when absent; WEIGHTS is the
  // model.safetensors or index file (see source()).
  const TensorInfo& Require(std::string_view name) const;
  std::vector<const TensorInfo*> All() const;  // in file order
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
  size_t total_bytes() const;
  // Releases the pages of [data, data + nbytes), tensor data of one of the files, from
  // this process (see MappedFile::Release).
  void Release(const void* data, size_t nbytes) const;
  // What errors name: the single weight file, the index file, or the shards' folder.
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::unordered_map<std::string_view, const TensorInfo*> by_name_;
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  size_t nbytes() const;
};

// The header as the reference writer lays it out: compact JSON, "__metadata__" first
// (when not empty), tensors in the given order with consecutive data_offsets, padded with
// spaces to a multiple of 8 bytes. Without the 8-byte length prefix.
std::string EncodeSafetensorsHeader(const std::vector<TensorSpec>& specs,
                                    const std::map<std::string, std::string>& metadata);

// Writes a safetensors file with tensors laid out in the given order. Data comes in
// chunks from `fill(index, offset, dst, nbytes)`, which writes bytes [offset, offset +
// nbytes) of tensor `index` to dst (whole elements, at most 32 MiB, dst aligned to the
// element size), so multi-GB files stream through a small buffer while earlier chunks are
// being written. Each tensor must start at a multiple of its element size (the writer
// checks). Atomic: a temporary file renamed into place, removed on any failure.
using TensorFill = std::function<void(size_t index, size_t offset, uint8_t* dst, size_t nbytes)>;
void WriteSafetensors(const std::string& path, const std::vector<TensorSpec>& specs,
                      const TensorFill& fill,
                      const std::map<std::string, std::string>& metadata = {});

// Convenience for small files (dumps, tests): tensors given with their bytes, laid out
// by element size (largest first, as the reference writer does) so all stay aligned.
struct TensorData {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
};
void WriteSafetensors(const std::string& path, const std::vector<TensorData>& tensors);

}  // namespace qvl
