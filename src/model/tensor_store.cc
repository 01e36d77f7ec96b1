#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"
#include "base/mapped_file.h"
#include "model/safetensors.h"

namespace qvl {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A shard name from an index must stay inside the model folder.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

// The parsed model.safetensors.index.json: which shard holds each tensor.
struct WeightIndex {
  std::string path;
  std::map<std::string, std::string> shard_of;
  std::vector<std::string> shards;  // in order of first mention
};

WeightIndex ReadWeightIndex(const std::string& dir) {
  WeightIndex index;
  index.path = dir + "/model.safetensors.index.json";
  const nlohmann::json doc = ParseJsonText(ReadFileToString(index.path), index.path);
  const JsonFieldReader top(doc, index.path, "");
  const JsonFieldReader weight_map = top.Object("weight_map");
  for (const auto& [name, shard] : doc.at("weight_map").items()) {
    if (!shard.is_string() || !IsPlainFileName(shard.get<std::string>())) {
      weight_map.FailField(
          name, StrCat("must name a shard file in the model folder, got ", shard.dump()));
    }
    const std::string file = shard.get<std::string>();
    if (std::find(index.shards.begin(), index.shards.end(), file) == index.shards.end()) {
      index.shards.push_back(file);
    }
    index.shard_of[name] = file;
  }
  if (index.shards.empty()) top.FailField("weight_map", "lists no tensors");
  for (const std::string& shard : index.shards) {
    if (!IsFile(dir + "/" + shard)) {
      Fail(ErrorCode::kNotFound, index.path, ": shard ", shard, " is missing from ", dir);
    }
  }
  return index;
}

}  // namespace

std::vector<std::string> FindWeightFiles(const std::string& dir) {
  if (IsFile(dir + "/model.safetensors.index.json")) {
    std::vector<std::string> paths;
    for (const std::string& shard : ReadWeightIndex(dir).shards) paths.push_back(dir + "/" + shard);
    return paths;
  }
  if (IsFile(dir + "/model.safetensors")) return {dir + "/model.safetensors"};
  Fail(ErrorCode::kNotFound, dir,
       ": no model weights (neither model.safetensors nor model.safetensors.index.json)");
}

TensorStore TensorStore::OpenFolder(const std::string& dir) {
  if (!IsFile(dir + "/model.safetensors.index.json")) return TensorStore(FindWeightFiles(dir));
  const WeightIndex index = ReadWeightIndex(dir);
  std::vector<std::string> paths;
  for (const std::string& shard : index.shards) paths.push_back(dir + "/" + shard);
  TensorStore store(paths);
  store.source_ = index.path;
  for (size_t i = 0; i < paths.size(); ++i) {
    for (const TensorInfo& t : store.files_[i]->tensors()) {
      const auto it = index.shard_of.find(t.name);
      if (it == index.shard_of.end()) {
        Fail(ErrorCode::kCorrupt, paths[i], ": holds tensor ", t.name, ", which ", index.path,
             " does not list");
      }
      if (it->second != index.shards[i]) {
        Fail(ErrorCode::kCorrupt, paths[i], ": holds tensor ", t.name, ", which ", index.path,
             " assigns to ", it->second);
      }
    }
  }
  for (const auto& [name, shard] : index.shard_of) {
    if (store.Find(name) == nullptr) {
      Fail(ErrorCode::kCorrupt, index.path, ": lists tensor ", name, " in shard ", shard,
           ", which does not hold it");
    }
  }
  return store;
}

TensorStore::TensorStore(const std::vector<std::string>& files) {
  if (files.empty()) Fail(ErrorCode::kInvalidArgument, "no weight files given");
  const size_t slash = files[0].rfind('/');
  source_ = files.size() == 1 || slash == std::string::npos ? files[0] : files[0].substr(0, slash);
  for (const std::string& path : files) {
    files_.push_back(std::make_unique<SafetensorsFile>(path));
    for (const TensorInfo& t : files_.back()->tensors()) {
      const auto [it, inserted] = by_name_.emplace(t.name, &t);
      if (!inserted) {
        Fail(ErrorCode::kCorrupt, path, ": tensor ", t.name, " is also in ", *it->second->file,
             "; each tensor must be stored once");
      }
    }
  }
}

const TensorInfo* TensorStore::Find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorInfo& TensorStore::Require(std::string_view name) const {
  const TensorInfo* t = Find(name);
  if (t == nullptr) Fail(ErrorCode::kCorrupt, source_, ": tensor ", name, " is missing");
  return *t;
}

std::vector<const TensorInfo*> TensorStore::All() const {
  std::vector<const TensorInfo*> all;
  for (const auto& file : files_) {
    for (const TensorInfo& t : file->tensors()) all.push_back(&t);
  }
  return all;
}

size_t TensorStore::total_bytes() const {
  size_t total = 0;
  for (const auto& file : files_) {
    for (const TensorInfo& t : file->tensors()) total += t.nbytes;
  }
  return total;
}

void TensorStore::Release(const void* data, size_t nbytes) const {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (const auto& file : files_) {
    const MappedFile& m = file->mapped();
    if (m.data() != nullptr && p >= m.data() && p < m.data() + m.size()) {
      m.Release(static_cast<size_t>(p - m.data()), nbytes);
      return;
    }
  }
}

}  // namespace qvl
