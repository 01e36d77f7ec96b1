// A loaded Qwen3-VL model: the folder's configs, the mapped weights and both towers.
// Weights stay in the page cache through the mmap; only small vectors (norms, biases)
// and converted formats are owned.
#pragma once

#include <memory>
#include <string>

#include "base/dtype.h"
#include "model/model_folder.h"
#include "model/safetensors.h"
#include "model/text_decoder.h"
#include "model/vision_tower.h"
#include "model/weights.h"

namespace qvl {

struct ModelOptions {
  MatmulPrecision precision = MatmulPrecision::kBF16;
  DType kv_dtype = DType::kBF16;
};

class Qwen3VLModel {
 public:
  // Opens and validates `dir` (see OpenModelFolder), maps the weights and prepares both
  // towers. Throws Error naming the file or tensor at fault.
  static std::unique_ptr<Qwen3VLModel> Load(const std::string& dir, const ModelOptions& options);

  const ModelFolder& folder() const { return folder_; }
  const ModelConfig& config() const { return folder_.config; }
  const ModelOptions& options() const { return options_; }
  const VisionTower& vision() const { return *vision_; }
  TextDecoder& text() { return *text_; }

 private:
  Qwen3VLModel(ModelFolder folder, const ModelOptions& options);

  ModelFolder folder_;
  ModelOptions options_;
  TensorStore store_;
  Qwen3VLWeights weights_;
  std::unique_ptr<VisionTower> vision_;
  std::unique_ptr<TextDecoder> text_;
};

}  // namespace qvl
