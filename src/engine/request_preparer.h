// Turns a GenerationRequest into a PreparedRequest: everything a request can get wrong is
// found here, on the submitting thread, before the engine spends any time on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "engine/decode_slots.h"
#include "engine/engine.h"
#include "engine/image_budget_policy.h"
#include "engine/image_cache.h"
#include "engine/media_memo.h"
#include "engine/prepared_request.h"
#include "engine/request_ranges.h"
#include "engine/video_budget_policy.h"
#include "image/image_processor.h"
#include "image/video_processor.h"
#include "model/config.h"
#include "text/chat_template.h"
#include "text/reasoning_split.h"
#include "text/tokenizer.h"

namespace qvl {

// The context of one sequence (EngineOptions::context_tokens): room for at least a short
// prompt and its answer, and at most what the engine's positions are sized for. `qvl
// serve -c` and `qvl run -c` take this range.
inline constexpr ParamRange kContextTokens{"context_tokens", 16, 1 << 24};

// Throws Error(kInvalidArgument) naming the EngineOptions field for options a
// RequestPreparer cannot work with: a context outside kContextTokens, no sequences, no
// default answer length, negative or zero limits, image budgets that contradict each
// other or the model's preprocessor settings, and video budgets that contradict each
// other. The RequestPreparer checks its options with it; a front end checks them with it
// before it loads the weights.
void CheckEngineOptions(const EngineOptions& options, const ImageProcessorParams& image_params);

// Whether `request`'s prompt opens a Thinking model's reasoning (its messages go through
// the Thinking template with its generation prompt; a raw prompt and a continued final
// message, whose reasoning the template closed, do not), so that its answers start with
// the reasoning and "</think>" before the reply.
bool OpensReasoning(ChatTemplateKind chat_template, const GenerationRequest& request);

class RequestPreparer {
 public:
  // Throws what CheckEngineOptions throws. `encodings`, the engine's, may be null: with
  // it, an image or video prepared before whose encoding it (or the shared store) still
  // holds is not decoded again. The request then carries that encoding and no pixels.
  // `chat_template` is the folder's (ModelSettings::chat_template).
  RequestPreparer(const ModelConfig& model, const GenerationConfig& generation,
                  const Tokenizer& tokenizer, const ImageProcessorParams& image_params,
                  const VideoProcessorParams& video_params, const EngineOptions& options,
                  ImageCache* encodings = nullptr,
                  ChatTemplateKind chat_template = ChatTemplateKind::kInstruct);

  // Throws Error: kInvalidArgument for bad images, videos or parameters, prompts over the
  // context and max_tokens that does not fit beside the prompt, kTooLarge for images and
  // videos over their limits. Errors about a field of the request are FieldErrors naming it
  // (an image's ImageInput::field, max_tokens_field, "messages", ...). The cheap checks come
  // first: image count, max_tokens and text size before any image is decoded or any text
  // tokenized.
  PreparedRequest Prepare(const GenerationRequest& request, uint64_t fallback_seed) const;

  // The prompt's text before its image pads are expanded and it is tokenized: a raw
  // prompt as it is, else the chat template's text of the messages (llama-server's
  // /apply-template). Throws FieldError naming request.messages_field for messages the
  // template refuses.
  std::string RenderPrompt(const GenerationRequest& request) const;

  // Tokens that end an answer: generation_config.json's and config.json's.
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  int64_t pixels_per_image_token() const { return PixelsPerImageToken(image_params_); }
  int64_t pixels_per_video_token() const { return PixelsPerVideoToken(video_params_.image); }
  const ImageProcessorParams& image_params() const { return image_params_; }
  const VideoProcessorParams& video_params() const { return video_params_; }
  const ServerImageBudget& image_budget() const { return image_budget_; }
  const ServerVideoBudget& video_budget() const { return video_budget_; }
  ChatTemplateKind chat_template() const { return chat_template_; }

 private:
  struct Recalled {
    std::optional<PreparedMedia> media;  // with its encoding in visual.shared_encoding
    bool shared_store_asked = false;     // and it had nothing
  };
  // A medium of `memo_key` prepared before, if its encoding is still to be had.
  Recalled Recall(uint64_t memo_key) const;
  std::shared_ptr<const VisionOutput> FindShared(const PreparedImage& img) const;
  void CheckSizes(const GenerationRequest& request) const;
  // Throws FieldError naming prompt[i] for an id outside the vocabulary or an image pad.
  void CheckPromptTokens(const std::vector<int32_t>& ids) const;

  const ModelConfig& model_;
  const GenerationConfig& generation_;
  const Tokenizer& tokenizer_;
  ImageProcessorParams image_params_;
  VideoProcessorParams video_params_;
  ImageLimits limits_;
  ServerImageBudget image_budget_;
  ServerVideoBudget video_budget_;
  EngineOptions options_;
  int64_t max_text_bytes_ = 0;
  std::vector<int32_t> eos_ids_;
  mutable DecodeSlots decode_slots_;
  ImageCache* encodings_;
  ChatTemplateKind chat_template_;
  mutable MediaMemo memo_;
};

}  // namespace qvl
