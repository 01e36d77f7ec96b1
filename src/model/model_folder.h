// A Hugging Face model folder, checked for every file qvl needs before anything is
// loaded, so a broken download fails at once with the name of the missing file.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"

namespace qvl {

struct ModelFolder {
  std::string dir;
  ModelConfig config;
  GenerationConfig generation;  // defaults when generation_config.json is absent
  std::string config_path;
  std::string generation_config_path;  // empty when absent
  std::string tokenizer_path;          // tokenizer.json
  std::string tokenizer_config_path;   // tokenizer_config.json
  // Where the chat template is: chat_template.jinja, chat_template.json or (older
  // folders) the "chat_template" field of tokenizer_config.json, in that preference.
  std::string chat_template_path;
  std::string preprocessor_config_path;   // preprocessor_config.json
  std::vector<std::string> weight_files;  // model.safetensors or its shards
};

// The file holding the chat template of `dir` (see ModelFolder::chat_template_path);
// throws Error(kNotFound) when there is none.
std::string FindChatTemplatePath(const std::string& dir);

// Checks that `dir` holds config.json (parsed and validated), the tokenizer files, a chat
// template, preprocessor_config.json and the weights (see FindWeightFiles). Throws
// Error(kNotFound) naming the missing file, Error(kCorrupt) for a malformed one. Does
// not read tensor data.
ModelFolder OpenModelFolder(const std::string& dir);

}  // namespace qvl
