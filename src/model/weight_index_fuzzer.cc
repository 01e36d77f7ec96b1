// libFuzzer target: model.safetensors.index.json. The input becomes the index file of a
// scratch model folder that also holds two small, valid shards, and the folder is opened
// with TensorStore::OpenFolder, so the index is checked against real shard contents.
// Only qvl::Error may come out, a shard name must never lead outside the folder, and
// every tensor of an accepted store is found under its name.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/safetensors.h"

namespace {

qvl::TensorData F32Tensor(const std::string& name, std::vector<float> values) {
  qvl::TensorData t;
  t.spec = {name, qvl::DType::kF32, {static_cast<int64_t>(values.size())}};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// A folder with shard 1 holding "a" and "b" and shard 2 holding "c" (the seed corpus
// names them), removed when the fuzzer exits.
const std::string& ScratchModelFolder() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != 0 ? tmp : "/tmp") + "/qvl_weight_index_fuzzer_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    auto* path = new std::string(pattern + "/model");
    std::filesystem::create_directory(*path);
    qvl::WriteSafetensors(*path + "/model-00001-of-00002.safetensors",
                          {F32Tensor("a", {1, 2}), F32Tensor("b", {3})});
    qvl::WriteSafetensors(*path + "/model-00002-of-00002.safetensors", {F32Tensor("c", {4, 5, 6})});
    std::atexit([] { std::filesystem::remove_all(std::filesystem::path(*dir).parent_path()); });
    return path;
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchModelFolder();
  {
    std::ofstream index(dir + "/model.safetensors.index.json", std::ios::binary | std::ios::trunc);
    index.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const qvl::TensorStore store = qvl::TensorStore::OpenFolder(dir);
    for (const auto& file : store.files()) {
      if (std::filesystem::path(file->path()).parent_path() != dir) std::abort();
    }
    for (const qvl::TensorInfo* t : store.All()) {
      if (store.Find(t->name) != t) std::abort();  // each tensor is stored once
    }
  } catch (const qvl::Error&) {
  }
  return 0;
}
