#include "engine/loaded_model.h"

#include "text/chat_template.h"

namespace qvl {

ModelSettings LoadModelSettings(const ModelFolder& folder) {
  const ChatTemplateFile chat_template = FindChatTemplate(folder.dir);
  CheckChatTemplate(chat_template.text, chat_template.path);
  ImageProcessorParams image_params = LoadPreprocessorConfig(folder.preprocessor_config_path);
  VideoProcessorParams video_params = VideoParamsOfFolder(folder.dir, image_params);
  return {Tokenizer::FromFile(folder.tokenizer_path), std::move(image_params),
          std::move(video_params)};
}

LoadedModel LoadModel(const std::string& dir, const ModelOptions& options) {
  std::unique_ptr<Qwen3VLModel> model = Qwen3VLModel::Load(dir, options);
  ModelSettings settings = LoadModelSettings(model->folder());
  return {std::move(model), std::move(settings)};
}

}  // namespace qvl
