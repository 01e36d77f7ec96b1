#include "engine/loaded_model.h"

#include "base/error.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

void CheckPatchGeometry(const ImageProcessorParams& params, const VisionConfig& vision,
                        const std::string& path, const std::string& config_path) {
  const struct {
    const char* field;
    int value;
    const char* vision_field;
    int expected;
  } fields[] = {
      {"patch_size", params.patch_size, "patch_size", vision.patch_size},
      {"temporal_patch_size", params.temporal_patch_size, "temporal_patch_size",
       vision.temporal_patch_size},
      {"merge_size", params.merge_size, "spatial_merge_size", vision.spatial_merge_size},
  };
  for (const auto& f : fields) {
    if (f.value != f.expected) {
      Fail(ErrorCode::kCorrupt, path, ": ", f.field, " is ", f.value, ", but ", config_path,
           " has vision_config.", f.vision_field, " ", f.expected, "; they must agree");
    }
  }
}

}  // namespace

PreprocessorSettings LoadPreprocessorSettings(const ModelFolder& folder) {
  PreprocessorSettings s;
  s.image = LoadPreprocessorConfig(folder.preprocessor_config_path);
  CheckPatchGeometry(s.image, folder.config.vision, folder.preprocessor_config_path,
                     folder.config_path);
  s.video = VideoParamsOfFolder(folder.dir, s.image);
  // Without a video file of its own the folder's video settings are the image ones,
  // checked above; with one, they came from it.
  CheckPatchGeometry(s.video.image, folder.config.vision, VideoPreprocessorConfigPath(folder.dir),
                     folder.config_path);
  return s;
}

ModelSettings LoadModelSettings(const ModelFolder& folder) {
  const ChatTemplateFile chat_template = FindChatTemplate(folder.dir);
  const ChatTemplateKind kind = CheckChatTemplate(chat_template.text, chat_template.path);
  PreprocessorSettings preprocessor = LoadPreprocessorSettings(folder);
  Tokenizer tokenizer = Tokenizer::FromFile(folder.tokenizer_path);
  const ModelConfig& c = folder.config;
  CheckTemplateTokens(
      tokenizer, folder.tokenizer_path,
      {c.image_token_id, c.video_token_id, c.vision_start_token_id, c.vision_end_token_id},
      folder.config_path);
  return {std::move(tokenizer), std::move(preprocessor.image), std::move(preprocessor.video), kind};
}

LoadedModel LoadModel(const std::string& dir, const ModelOptions& options) {
  std::unique_ptr<Qwen3VLModel> model = Qwen3VLModel::Load(dir, options);
  ModelSettings settings = LoadModelSettings(model->folder());
  return {std::move(model), std::move(settings)};
}

}  // namespace qvl
