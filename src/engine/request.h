// What a client asks the engine for, and what the engine reports back while it works.
// Front ends (HTTP server, CLI) build a GenerationRequest from their own input format;
// the engine never sees JSON or HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "text/chat_template.h"

namespace qvl {

// One image of the request, in the order its part appears in the messages.
struct ImageInput {
  std::string name;            // how errors name it: "image 2 (messages[1].content[0])"
  std::vector<uint8_t> bytes;  // the encoded file (JPEG, PNG, WebP, GIF, BMP)
};

// Unset fields fall back to the model's generation_config.json, then to greedy.
struct SamplingParams {
  std::optional<float> temperature;  // 0 = greedy
  std::optional<float> top_p;
  std::optional<int> top_k;  // 0 = off
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;  // HF style, multiplicative, 1 = off
  std::optional<float> presence_penalty;    // OpenAI style, additive, 0 = off
  std::optional<float> frequency_penalty;   // OpenAI style, additive, 0 = off
  std::optional<uint64_t> seed;
};

// Per-request image budget in pixels (one image token = 32 x 32 pixels); 0 = the
// server's default. Clamped to what the model allows.
struct ImageBudgetRequest {
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
};

struct GenerationRequest {
  std::vector<ChatMessage> messages;
  std::vector<ImageInput> images;
  SamplingParams sampling;
  int max_tokens = 0;  // 0 = the server's default, capped by the context
  std::vector<std::string> stop;
  bool ignore_eos = false;
  int top_logprobs = -1;  // -1: no logprobs; 0..20: logprob of the chosen token + N best
  ImageBudgetRequest image_budget;
};

enum class FinishReason { kNone, kStop, kLength, kCancelled, kError };
const char* FinishReasonName(FinishReason reason);  // "stop", "length", "cancelled", "error"

struct TokenLogprob {
  int32_t id = 0;
  std::string text;  // the token's bytes as text (may be part of a UTF-8 character)
  float logprob = 0;
};

struct GeneratedToken {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // top_logprobs alternatives, best first
};

// Where an image's vision encoding came from: this replica's image or prefix cache, the
// cache shared between replicas, or the vision tower.
enum class ImageSource : uint8_t { kEncoder, kLocalCache, kSharedCache };

struct ImageGrid {
  int64_t width = 0, height = 0;                  // as sent (after EXIF rotation)
  int64_t resized_width = 0, resized_height = 0;  // after smart_resize
  int64_t grid_t = 1, grid_h = 0, grid_w = 0;     // patches
  int64_t tokens = 0;                             // image tokens in the prompt
  bool cached = false;                            // vision encoding reused
  ImageSource source = ImageSource::kEncoder;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose KV came from the prefix cache
};

struct Timings {
  double queue_ms = 0;       // submitted -> first scheduled
  double preprocess_ms = 0;  // image decode + resize + patches, tokenization
  double vision_ms = 0;      // vision tower
  double prefill_ms = 0;     // prompt through the decoder
  double decode_ms = 0;      // generated tokens after the first
  double ttft_ms = 0;        // submitted -> first token
  double total_ms = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  std::vector<ImageGrid> images;
};

// A step of progress of one request. Text arrives in UTF-8-complete pieces with stop
// strings already removed. The last update has finished == true and carries usage and
// timings (and the error message when finish_reason is kError).
struct GenerationUpdate {
  std::string text;
  std::vector<GeneratedToken> tokens;
  bool finished = false;
  FinishReason finish_reason = FinishReason::kNone;
  ErrorCode error_code = ErrorCode::kInternal;
  std::string error;
  Usage usage;
  Timings timings;
};

// Called on the engine thread; must return quickly and never block on the client.
using UpdateSink = std::function<void(GenerationUpdate&&)>;

}  // namespace qvl
