// An OpenAI /v1/chat/completions request body -> what the engine needs. Everything a
// client can get wrong is found here, before any engine work, and reported as a
// FieldError that names the field ("messages[1].content[0].image_url.url: ...").
// Works on raw bytes so that a fuzzer can drive it; with the default policy it never
// touches the disk or the network.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/request.h"
#include "server/image_source.h"

namespace qvl {

struct ChatRequestPolicy {
  // Accepted values of "model" (served id first, then aliases); empty = any. A request
  // without "model" is served by the one model.
  std::vector<std::string> model_names;
  MediaPolicy media;
  // Refused before any image is loaded. With an engine, TakeEngineLimits
  // (engine_limits.h) sets it, media.max_image_bytes and pixels_per_image_token.
  int max_images = EngineOptions{}.max_images_per_request;
  // OpenAI takes 4; vLLM, llama-server and Ollama any number, and editors' completion
  // templates send around ten (a model's special tokens and a few line patterns).
  int max_stop_strings = 16;
  // Pixels covered by one image token: turns min_image_tokens / max_image_tokens into
  // pixels. Required.
  int64_t pixels_per_image_token = 0;
  // Pixels over all sampled frames covered by one video token: turns min_video_tokens /
  // max_video_tokens (and qwen-vl-utils' total_pixels) into pixels. Required by requests
  // that use them.
  int64_t pixels_per_video_token = 0;
  // The served model's template (Ollama's "think" depends on it).
  ChatTemplateKind chat_template = ChatTemplateKind::kInstruct;
};

struct ChatRequest {
  GenerationRequest generation;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool logprobs = false;
  bool parse_tool_calls = false;  // tools are offered: answers are split into tool_calls
  // llama-server's return_progress: a streamed request hears how the work before its
  // first token comes along, in chunks with prompt_progress.
  bool return_progress = false;
};

// Parses and checks `body`. Throws FieldError: kInvalidArgument for malformed JSON, wrong
// types and values, unsupported features; kNotFound for an unknown model; kTooLarge for
// an image over the byte limit. Image bytes are loaded (data URLs decoded, files read,
// URLs fetched as the policy allows) but not decoded.
ChatRequest ParseChatRequest(std::string_view body, const ChatRequestPolicy& policy);

}  // namespace qvl
