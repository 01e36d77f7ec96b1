// A loaded Qwen3-VL model: the folder's configs, the mapped weights and both towers.
// Weights stay in the page cache through the mmap; only small vectors (norms, biases)
// and formats made in memory are owned. Packed formats come from a cache file that the
// first start writes (see model/packed_weight_cache.h).
#pragma once

#include <memory>
#include <string>

#include "base/dtype.h"
#include "model/model_folder.h"
#include "model/packed_weight_cache.h"
#include "model/safetensors.h"
#include "model/text_decoder.h"
#include "model/vision_tower.h"
#include "model/weights.h"

namespace qvl {

struct ModelOptions {
  // Formats of the linear layers' weights, per tower (the `--dtype` / `--vision-dtype`
  // flags): kQ8 / kQ4 quantize (int8 / 4-bit, a scale per 32), kW8A8 rotates and
  // quantizes (int8, a scale per output), and kBF16Packed repacks, all mapped from the
  // packed-weight cache; kBF16 / kF32 multiply with the
  // checkpoint's own matrices (in place when the dtype matches) at `precision`.
  WeightFormat text_weights = WeightFormat::kQ8;
  WeightFormat vision_weights = WeightFormat::kQ8;
  MatmulPrecision precision = MatmulPrecision::kBF16;
  DType kv_dtype = DType::kBF16;
  // Folder of the packed-weight cache: "" = DefaultWeightCacheDir(), "none" = pack in
  // memory at every start.
  std::string weight_cache_dir;
};

// The vision tower's weight format when the user names none: kBF16Packed on the AMX
// tier for packed text weights (tile products make bf16 vision faster there than the
// int8 kernels, and more accurate), text_weights otherwise.
WeightFormat DefaultVisionWeights(WeightFormat text_weights);

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
  // Where the packed weights came from (mapped cache file, built now, or memory).
  const PackedWeightCache& packed_weights() const { return *packed_; }

 private:
  Qwen3VLModel(ModelFolder folder, const ModelOptions& options);

  ModelFolder folder_;
  ModelOptions options_;
  TensorStore store_;
  Qwen3VLWeights weights_;
  std::unique_ptr<PackedWeightCache> packed_;
  std::unique_ptr<VisionTower> vision_;
  std::unique_ptr<TextDecoder> text_;
};

}  // namespace qvl
