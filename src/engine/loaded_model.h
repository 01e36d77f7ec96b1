// A model as everything that uses it needs it: the weights (Qwen3VLModel) and what the
// folder holds besides, loaded and checked together — the tokenizer, the chat template
// (qvl renders the built-in Qwen3-VL template, so a folder whose own template differs
// is refused rather than rendered wrong) and the image and video preprocessor settings. The
// engine, `qvl bench`, `qvl dump` and `qvl info` all go through here.
#pragma once

#include <memory>
#include <string>

#include "image/preprocessor_config.h"
#include "image/video_processor.h"
#include "model/model_folder.h"
#include "model/qwen3vl.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace qvl {

struct PreprocessorSettings {
  ImageProcessorParams image;
  VideoProcessorParams video;  // video_preprocessor_config.json over image
};

// The image and video preprocessor settings of `folder` (LoadPreprocessorConfig,
// VideoParamsOfFolder), each checked against config.json's vision_config: the patch
// embedding's weights fix patch_size, temporal_patch_size and the merge, and a
// preprocessor that cut other patches would feed the vision tower rows of the wrong
// length. Throws Error naming the file and the field.
PreprocessorSettings LoadPreprocessorSettings(const ModelFolder& folder);

struct ModelSettings {
  Tokenizer tokenizer;
  ImageProcessorParams image_params;
  VideoProcessorParams video_params;  // video_preprocessor_config.json over image_params
  ChatTemplateKind chat_template = ChatTemplateKind::kInstruct;  // CheckChatTemplate's
};

// Throws Error naming the file at fault (see Tokenizer::FromFile, CheckTemplateTokens,
// CheckChatTemplate, LoadPreprocessorSettings).
ModelSettings LoadModelSettings(const ModelFolder& folder);

struct LoadedModel {
  std::unique_ptr<Qwen3VLModel> model;
  ModelSettings settings;
};

// Qwen3VLModel::Load, then LoadModelSettings of its folder.
LoadedModel LoadModel(const std::string& dir, const ModelOptions& options);

}  // namespace qvl
