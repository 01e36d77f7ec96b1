// Test support: the tiny fixture checkpoint as editable tensors, and a fixture that maps
// them after a test has broken (or re-encoded) one thing at a time.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "model/scratch_folder.h"
#include "model/weights.h"

namespace qvl {

// The tiny checkpoint as editable tensors, to break one thing at a time.
inline std::vector<TensorData> TinyTensors() {
  const SafetensorsFile file(kTinyModelDir + "/model.safetensors");
  std::vector<TensorData> out;
  for (const TensorInfo& t : file.tensors()) {
    out.push_back({{t.name, t.dtype, t.shape}, std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  }
  return out;
}

inline TensorData* FindTensor(std::vector<TensorData>& tensors, const std::string& name) {
  for (TensorData& t : tensors) {
    if (t.spec.name == name) return &t;
  }
  ADD_FAILURE() << name;
  return nullptr;
}

inline void Erase(std::vector<TensorData>& tensors, const std::string& name) {
  tensors.erase(tensors.begin() + (FindTensor(tensors, name) - tensors.data()));
}

class BrokenWeights : public ::testing::Test {
 protected:
  BrokenWeights()
      : dir_("broken_weights"),
        path_(dir_.File("model.safetensors")),
        config_(LoadModelConfig(kTinyModelDir + "/config.json")),
        tensors_(TinyTensors()) {}

  // Writes the edited tensors and returns the mapping error ("" when they map).
  std::string MapError() {
    WriteSafetensors(path_, tensors_);
    try {
      const TensorStore store({path_});
      MapQwen3VLWeights(store, config_);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      return e.what();
    }
    return "";
  }

  // Appends tensor `name` holding `values` (a vector of its elements).
  template <typename Values>
  void Add(const std::string& name, DType dtype, std::vector<int64_t> shape, const Values& values) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
    tensors_.push_back({{name, dtype, std::move(shape)},
                        std::vector<uint8_t>(p, p + values.size() * sizeof(values[0]))});
  }

  ScratchFolder dir_;
  std::string path_;
  ModelConfig config_;
  std::vector<TensorData> tensors_;
};

}  // namespace qvl
