#include "model/qwen3vl.h"

#include <utility>

namespace qvl {

Qwen3VLModel::Qwen3VLModel(ModelFolder folder, const ModelOptions& options)
    : folder_(std::move(folder)),
      options_(options),
      store_(folder_.weight_files),
      weights_(MapQwen3VLWeights(store_, folder_.config)) {
  vision_ = std::make_unique<VisionTower>(folder_.config.vision, weights_.vision, options.precision);
  text_ = std::make_unique<TextDecoder>(folder_.config, weights_.text, options.precision);
}

std::unique_ptr<Qwen3VLModel> Qwen3VLModel::Load(const std::string& dir,
                                                 const ModelOptions& options) {
  return std::unique_ptr<Qwen3VLModel>(new Qwen3VLModel(OpenModelFolder(dir), options));
}

}  // namespace qvl
