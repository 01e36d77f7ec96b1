#include "cli/model_check.h"

#include "engine/loaded_model.h"
#include "model/weights.h"

namespace qvl::cli {

CheckedModelFolder CheckModelFolder(const std::string& dir) {
  ModelFolder folder = OpenModelFolder(dir);
  TensorStore store = TensorStore::OpenFolder(folder.dir);
  CheckQwen3VLTensors(store, folder.config);
  // The tokenizer, chat template and preprocessor config, as the engine will load them.
  LoadModelSettings(folder);
  return {std::move(folder), std::move(store)};
}

}  // namespace qvl::cli
