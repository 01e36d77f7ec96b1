// libFuzzer target: a /v1/chat/completions body (and the same bytes as a
// /v1/completions, a /v1/responses, a /v1/embeddings, Anthropic's /v1/messages and
// /v1/messages/count_tokens and Ollama's /api/chat, /api/generate and /api/embed bodies)
// all the way to what the engine thread gets.
// ParseChatRequest (with a policy that never touches the disk or the network) maps the JSON to a
// GenerationRequest, and the engine's RequestPreparer, set up with
// the tiny fixture model's config, tokenizer and image settings (no weights), decodes
// the images and videos, renders the chat template, tokenizes and lays out positions and cache
// keys. Parsing may only throw FieldError, preparing only qvl::Error; an accepted
// request must respect every limit of the policy.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/field_error.h"
#include "engine/request_preparer.h"
#include "engine/request_ranges.h"
#include "image/image_budget.h"
#include "image/preprocessor_config.h"
#include "image/video_processor.h"
#include "model/config.h"
#include "server/anthropic_request.h"
#include "server/chat_request.h"
#include "server/completion_request.h"
#include "server/embeddings_request.h"
#include "server/ollama_request.h"
#include "server/output_controls.h"
#include "server/responses_request.h"
#include "text/tokenizer.h"

namespace {

const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";

// The tiny model's request preparation, loaded once; the engine's limits made small so
// a fuzzed request cannot ask for much work.
struct Preparation {
  qvl::ModelConfig model = qvl::LoadModelConfig(kModelDir + "/config.json");
  qvl::GenerationConfig generation =
      qvl::LoadGenerationConfig(kModelDir + "/generation_config.json", model);
  qvl::Tokenizer tokenizer = qvl::Tokenizer::FromFile(kModelDir + "/tokenizer.json");
  qvl::ImageProcessorParams image_params =
      qvl::LoadPreprocessorConfig(kModelDir + "/preprocessor_config.json");
  qvl::VideoProcessorParams video_params =
      SmallVideos(qvl::VideoParamsOfFolder(kModelDir, image_params));
  qvl::RequestPreparer preparer{model,        generation,   tokenizer,
                                image_params, video_params, Options()};

  // At most 8 frames of 256 x 256 pixels' worth.
  static qvl::VideoProcessorParams SmallVideos(qvl::VideoProcessorParams params) {
    params.image.max_pixels = 8 * 256 * 256;
    params.sampling.max_frames = 8;
    return params;
  }

  static qvl::VideoLimits Videos() {
    qvl::VideoLimits limits;
    limits.max_encoded_bytes = 256 << 10;
    limits.max_frame_pixels = 1 << 20;
    limits.max_input_frames = 64;
    limits.max_seconds = 60;
    limits.max_videos_per_request = 2;
    return limits;
  }

  static qvl::EngineOptions Options() {
    qvl::EngineOptions options;
    options.context_tokens = 4096;
    options.max_images_per_request = 4;
    options.max_image_bytes = 64 << 10;
    options.max_image_pixels = 1 << 20;
    options.max_pixels = 256 * 256;
    options.video_limits = Videos();
    return options;
  }
};

qvl::ChatRequestPolicy FuzzPolicy() {
  qvl::ChatRequestPolicy policy;
  policy.model_names = {"qwen3-vl", "qvl"};
  policy.max_images = 4;
  policy.media.max_image_bytes = 64 << 10;
  policy.media.video = Preparation::Videos();
  const qvl::ImageProcessorParams image_params =
      qvl::LoadPreprocessorConfig(kModelDir + "/preprocessor_config.json");
  policy.pixels_per_image_token = qvl::PixelsPerImageToken(image_params);
  policy.pixels_per_video_token =
      qvl::PixelsPerVideoToken(qvl::VideoParamsOfFolder(kModelDir, image_params).image);
  return policy;
}

// Prepares an accepted request; only kInternal (a bug, not bad input) may escape. An
// embedding generates nothing; any other request has room for a token.
void Prepare(const Preparation& preparation, const qvl::GenerationRequest& g) {
  try {
    const qvl::PreparedRequest prepared = preparation.preparer.Prepare(g, 1);
    if (prepared.prompt.size() != prepared.keys.size() || prepared.prompt.empty() ||
        prepared.embed != g.embed ||
        (g.embed ? prepared.output.max_tokens != 0 : prepared.output.max_tokens < 1)) {
      std::abort();
    }
  } catch (const qvl::Error& e) {
    if (e.code() == qvl::ErrorCode::kInternal) std::abort();
  }
}

// The same bytes as a /v1/completions body: a raw prompt, no images or videos.
void FuzzTextCompletion(const Preparation& preparation, const qvl::ChatRequestPolicy& policy,
                        std::string_view body) {
  qvl::CompletionRequest request;
  try {
    request = qvl::ParseCompletionRequest(body, policy);
  } catch (const qvl::FieldError&) {
    return;
  }
  const size_t prompts = request.generations.size();
  if (prompts < 1 || prompts > static_cast<size_t>(qvl::kMaxCompletionPrompts) ||
      request.logprobs > 5) {
    std::abort();
  }
  for (const qvl::GenerationRequest& g : request.generations) {
    const bool text = g.prompt_text && !g.prompt_text->empty();
    if (text == !g.prompt_tokens.empty() || !g.images.empty() || !g.videos.empty() ||
        !g.messages.empty() || static_cast<int>(g.stop.size()) > policy.max_stop_strings ||
        g.max_tokens > qvl::request_ranges::kMaxTokens.max || g.max_tokens < 1 ||
        prompts * static_cast<size_t>(g.n) > static_cast<size_t>(qvl::kMaxChoices)) {
      std::abort();
    }
    Prepare(preparation, g);
  }
}

// An accepted chat-shaped request (chat or Responses) respects every limit of the policy.
void CheckChatShaped(const qvl::ChatRequestPolicy& policy, const qvl::GenerationRequest& g) {
  if (g.messages.empty() || static_cast<int>(g.images.size()) > policy.max_images ||
      static_cast<int>(g.stop.size()) > policy.max_stop_strings ||
      g.max_tokens > qvl::request_ranges::kMaxTokens.max || g.max_tokens < 0) {
    std::abort();
  }
  for (const qvl::ImageInput& image : g.images) {
    if (static_cast<int64_t>(image.bytes.size()) > policy.media.max_image_bytes) {
      std::abort();
    }
  }
}

// The same bytes as a /v1/responses body; its echo must serialize (the response repeats it).
void FuzzResponses(const Preparation& preparation, const qvl::ChatRequestPolicy& policy,
                   std::string_view body) {
  qvl::ResponsesRequest request;
  try {
    request = qvl::ParseResponsesRequest(body, policy);
  } catch (const qvl::FieldError&) {
    return;
  }
  CheckChatShaped(policy, request.generation);
  if (request.echo.dump().empty()) std::abort();
  Prepare(preparation, request.generation);
}

// The same bytes as Anthropic's /v1/messages and /v1/messages/count_tokens bodies; a count
// reads no token limit or stop strings, and a continued answer continues an assistant
// message.
void FuzzAnthropic(const Preparation& preparation, const qvl::ChatRequestPolicy& policy,
                   std::string_view body) {
  for (const qvl::AnthropicBody kind :
       {qvl::AnthropicBody::kMessages, qvl::AnthropicBody::kCountTokens}) {
    qvl::AnthropicRequest request;
    try {
      request = qvl::ParseAnthropicRequest(body, policy, kind);
    } catch (const qvl::FieldError&) {
      continue;
    }
    const qvl::GenerationRequest& g = request.generation;
    CheckChatShaped(policy, g);
    if ((kind == qvl::AnthropicBody::kCountTokens &&
         (g.max_tokens != 0 || !g.stop.empty() || request.stream)) ||
        (g.continue_final_message && g.messages.back().role != "assistant")) {
      std::abort();
    }
    Prepare(preparation, g);
  }
}

// The same bytes as Ollama's /api/chat and /api/generate bodies; a raw generate prompt
// is text alone.
void FuzzOllama(const Preparation& preparation, const qvl::ChatRequestPolicy& policy,
                std::string_view body) {
  for (const bool generate : {false, true}) {
    qvl::OllamaRequest request;
    try {
      request =
          generate ? qvl::ParseOllamaGenerate(body, policy) : qvl::ParseOllamaChat(body, policy);
    } catch (const qvl::FieldError&) {
      continue;
    }
    const qvl::GenerationRequest& g = request.generation;
    if (request.load_only) {  // answered at once: nothing may have been read to prepare
      if (g.prompt_text || !g.messages.empty() || !g.images.empty()) std::abort();
      continue;
    }
    if (g.prompt_text) {
      if (g.prompt_text->empty() || !g.messages.empty() || !g.images.empty()) std::abort();
    } else {
      CheckChatShaped(policy, g);
    }
    Prepare(preparation, g);
  }
}

// The same bytes as /v1/embeddings and Ollama's /api/embed bodies: embed requests within
// the input and dimension limits, each a raw prompt, token ids or (OpenAI's only, alone)
// messages.
void FuzzEmbeddings(const Preparation& preparation, const qvl::ChatRequestPolicy& policy,
                    std::string_view body) {
  const int64_t hidden_size = preparation.model.text.hidden_size;
  for (const bool ollama : {false, true}) {
    qvl::EmbeddingsRequest request;
    try {
      request = ollama ? qvl::ParseOllamaEmbedRequest(body, policy, hidden_size)
                       : qvl::ParseEmbeddingsRequest(body, policy, hidden_size);
    } catch (const qvl::FieldError&) {
      continue;
    }
    if ((request.inputs.empty() && !ollama) ||
        request.inputs.size() > static_cast<size_t>(qvl::kMaxEmbeddingInputs) ||
        request.dimensions < 0 || request.dimensions > hidden_size || (ollama && request.base64)) {
      std::abort();
    }
    for (const qvl::GenerationRequest& g : request.inputs) {
      if (!g.embed || g.max_tokens != 0) std::abort();
      const bool text = g.prompt_text && !g.prompt_text->empty();
      if (g.messages.empty()) {
        if (text == !g.prompt_tokens.empty() || !g.images.empty() || !g.videos.empty()) {
          std::abort();
        }
      } else {
        if (ollama || request.inputs.size() != 1 || g.prompt_text || !g.prompt_tokens.empty()) {
          std::abort();
        }
        CheckChatShaped(policy, g);
      }
      Prepare(preparation, g);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const qvl::ChatRequestPolicy policy = FuzzPolicy();
  static const Preparation* preparation = new Preparation();
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  FuzzTextCompletion(*preparation, policy, body);
  FuzzResponses(*preparation, policy, body);
  FuzzOllama(*preparation, policy, body);
  FuzzAnthropic(*preparation, policy, body);
  FuzzEmbeddings(*preparation, policy, body);
  qvl::ChatRequest request;
  try {
    request = qvl::ParseChatRequest(body, policy);
  } catch (const qvl::FieldError&) {
    return 0;
  }
  CheckChatShaped(policy, request.generation);
  Prepare(*preparation, request.generation);
  return 0;
}
