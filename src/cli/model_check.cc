#include "cli/model_check.h"

#include "model/weights.h"
#include "text/chat_template.h"

namespace qvl::cli {

CheckedModelFolder CheckModelFolder(const std::string& dir) {
  ModelFolder folder = OpenModelFolder(dir);
  TensorStore store = TensorStore::OpenFolder(folder.dir);
  CheckQwen3VLTensors(store, folder.config);
  const ChatTemplateFile chat_template = FindChatTemplate(folder.dir);
  CheckChatTemplate(chat_template.text, chat_template.path);
  PreprocessorSettings preprocessor = LoadPreprocessorSettings(folder);
  return {std::move(folder), std::move(store), std::move(preprocessor)};
}

}  // namespace qvl::cli
