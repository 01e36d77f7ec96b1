// The checks `qvl info` makes of a model folder, reading only headers and small files
// (config, every tensor's name, shape and dtype, chat template, preprocessor configs):
// shared with `qvl serve`, which makes them before it listens. (The tokenizer, 11 MB of
// JSON, is left to the engine: parsing it twice would leave its freed heap behind in the
// serving process.)
#pragma once

#include <string>

#include "engine/loaded_model.h"
#include "model/model_folder.h"
#include "model/safetensors.h"

namespace qvl::cli {

struct CheckedModelFolder {
  ModelFolder folder;
  TensorStore store;  // headers only
  PreprocessorSettings preprocessor;
};

// Throws Error naming the file at fault.
CheckedModelFolder CheckModelFolder(const std::string& dir);

}  // namespace qvl::cli
