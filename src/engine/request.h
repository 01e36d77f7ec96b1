// What a client asks the engine for, and what the engine reports back while it works.
// Front ends (HTTP server, CLI) build a GenerationRequest from their own input format;
// the engine never sees JSON or HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "text/chat_template.h"

namespace qvl {

class Grammar;

// OpenAI's image_url.detail: how many image tokens an image may become (see
// image_budget_policy.h).
enum class ImageDetail { kAuto, kLow, kHigh };

// One image of the request, in the order its part appears in the messages.
struct ImageInput {
  std::string name;            // how messages name it: "image 2", or the file's path
  std::vector<uint8_t> bytes;  // the encoded file (JPEG, PNG, WebP, GIF, BMP)
  // The request field it came from ("messages[1].content[0].image_url.url"), carried into
  // FieldError::field() of every error about it; empty when it came from no field.
  std::string field;
  ImageDetail detail = ImageDetail::kAuto;
};

// Per-video budget; 0 = not asked (the server's default). Pixel bounds count the frames
// alone, as the reference's `size` and qwen-vl-utils' keys do: clip bounds cover all
// sampled frames (T x H x W), frame bounds one frame. Clamped to what the server and the
// model allow (see video_budget_policy.h).
struct VideoBudgetRequest {
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
  int64_t min_frame_pixels = 0;
  int64_t max_frame_pixels = 0;
  // The video's whole cost in the prompt: vision tokens, timestamps and vision markers.
  int64_t min_tokens = 0;
  int64_t max_tokens = 0;
};

// One video of the request, in the order its part appears in the messages: every frame
// of the clip as an encoded image shown at `fps`, or (frames empty) a video file.
struct VideoInput {
  std::string name;  // how errors name it: "video 1 (messages[0].content[0])"
  // The request field it came from ("messages[0].content[0].video"), carried into
  // FieldError::field() of every error about it; empty when it came from no field.
  std::string field;
  std::vector<std::vector<uint8_t>> frames;
  double fps = 0;             // of `frames`; a file's comes from its container
  std::vector<uint8_t> file;  // MP4, WebM, ... when frames is empty
  // Sampling for this video; 0 = the model's (video_preprocessor_config.json: 2 frames
  // per second, at least 4, at most 768). num_frames: exactly that many (at most the
  // clip's), instead of a rate.
  double sample_fps = 0;
  int64_t min_frames = 0;
  int64_t max_frames = 0;
  int64_t num_frames = 0;
  VideoBudgetRequest budget;
};

// A link of the sampler chain (llama-server's `samplers`). A truncation sees the
// probabilities at the temperature of the links before it: llama-server's default chain
// ends with the temperature, transformers' begins with it.
enum class SamplerStep : uint8_t {
  kPenalties,
  kTopK,
  kTopP,
  kMinP,
  kTemperature,
  kTypicalP,
  kTopNSigma,
  kXtc
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
  // llama-server's other samplers (llama.cpp's llama-sampling.cpp): locally typical
  // sampling (1 = off), top-n-sigma (<= 0 off) and XTC (probability 0 or a threshold
  // above 0.5 = off).
  std::optional<float> typical_p;
  std::optional<float> top_n_sigma;
  std::optional<float> xtc_probability;
  std::optional<float> xtc_threshold;
  // llama.cpp's dynamic temperature: temperature ± dynatemp_range (0 = off), the higher the
  // more even the candidates (their entropy, normalized, to dynatemp_exponent).
  std::optional<float> dynatemp_range;
  std::optional<float> dynatemp_exponent;
  // llama.cpp's Mirostat (1 or 2; 0 = off), which stands in for the truncations: a target
  // surprise tau (bits) and learning rate eta.
  std::optional<int> mirostat;
  std::optional<float> mirostat_tau;
  std::optional<float> mirostat_eta;
  std::optional<uint64_t> seed;
  // The chain in the client's order; unset = transformers' (penalties, temperature, top_k,
  // top_p, min_p, typical_p), with top-n-sigma first and XTC last. A link left out is
  // off: a model default for it is not applied.
  std::optional<std::vector<SamplerStep>> chain;
};

// Per-request image budget in pixels; 0 = the server's default. Clamped to what the
// server and the model allow (see image_budget_policy.h).
struct ImageBudgetRequest {
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
};

// Added to a token's logit before sampling (OpenAI's logit_bias); -100 all but bans it.
struct LogitBias {
  int32_t token = 0;
  float bias = 0;
};

struct GenerationRequest {
  std::vector<ChatMessage> messages;
  // Set: the prompt is this text, tokenized as is (special tokens included) with no chat
  // template and no images; `messages` is unused (the legacy /v1/completions API).
  std::optional<std::string> prompt_text;
  // Non-empty: the prompt as token ids, used as they are (no images; `messages` unused).
  std::vector<int32_t> prompt_tokens;
  std::vector<ImageInput> images;
  std::vector<VideoInput> videos;
  // False: the prompt ends with the last message, the assistant turn not opened (vLLM's
  // /tokenize add_generation_prompt). Messages only; a raw prompt is used as it is.
  bool add_generation_prompt = true;
  // True: the prompt ends inside the last message, an assistant one, and the answer
  // continues its text (vLLM's continue_final_message, Ollama's prefill; see
  // RenderContinuedChat); add_generation_prompt is then not read. Messages only.
  bool continue_final_message = false;
  // Tool definitions for the chat template's system turn, serialized as it does (see
  // RenderChatTemplate).
  std::vector<std::string> tools_json;
  SamplingParams sampling;
  // Answers to the same prompt: they share its KV pages and image encodings, and choice i
  // samples with seed + i.
  int n = 1;
  std::vector<LogitBias> logit_bias;
  // Constrained decoding: every answer is a sentence of this grammar (null = free text).
  std::shared_ptr<const Grammar> grammar;
  // 0 = the server's default, cut to what the context leaves; a given value that does
  // not fit beside the prompt is refused, naming max_tokens_field.
  int max_tokens = 0;
  std::string max_tokens_field = "max_tokens";
  // The request's name for its conversation or raw prompt, named when the prompt is too
  // long: an OpenAI chat's "messages", a Responses request's "input", a raw prompt's
  // "prompt" (/v1/completions, Ollama's generate), an embeddings input's "input[2]".
  std::string messages_field = "messages";
  std::vector<std::string> stop;
  // vLLM's stop_token_ids: the answer also ends, with "stop", when one of these is
  // sampled; the token's text is not part of it (as an end-of-sequence token's is not).
  // ignore_eos leaves them in force.
  std::vector<int32_t> stop_token_ids;
  // vLLM's allowed_token_ids: only these tokens may be sampled (empty: any token).
  std::vector<int32_t> allowed_token_ids;
  // vLLM's bad_words: texts the answer may not generate (see PrepareTokenBans).
  std::vector<std::string> bad_words;
  // vLLM's include_stop_str_in_output: the stop string that matched, or the text of the
  // stop token id that ended the answer, stays at its end.
  bool include_stop_str = false;
  // vLLM's min_tokens: neither an end-of-sequence token nor a stop_token_id can be sampled,
  // and no stop string is looked for, before the answer has this many tokens (a Thinking
  // model's reasoning counts, as completion_tokens counts it).
  int min_tokens = 0;
  // A Thinking model's reasoning may run this many tokens: then "</think>" is the only
  // token it may take, and the reply follows (vLLM's thinking_token_budget, Anthropic's
  // thinking.budget_tokens). -1: no budget; a model that does not reason ignores it.
  int reasoning_budget = -1;
  bool ignore_eos = false;
  // The answer is the prompt's embedding (GenerationUpdate::embedding), and no token is
  // generated: the hidden state of the prompt's last token after the final norm, scaled to
  // unit length (last-token pooling, as Qwen3-Embedding and vLLM's pooling runner for a
  // causal model). Its final update finishes with kStop; n, grammar and sampling are unused.
  bool embed = false;
  int top_logprobs = -1;  // -1: no logprobs; 0..20: logprob of the chosen token + N best
  // vLLM's prompt_logprobs, to score how likely a text is (lm-evaluation-harness asks for it
  // through /v1/completions' echo): -1: none; 0..20: each prompt token's logprob given those
  // before it, and the N most likely tokens there (GenerationUpdate::prompt_tokens). Such a
  // prompt takes nothing from the prefix cache, since every position's logits are needed.
  // An embed request ignores it.
  int prompt_logprobs = -1;
  ImageBudgetRequest image_budget;
  // How the front end names the request (the server's X-Request-Id), so that the engine's
  // log lines about it join the front end's; empty: they name it by the engine's own
  // number where they name it at all.
  std::string request_id;
  // Updates with GenerationUpdate::progress while the prompt's images are encoded and its
  // tokens read, before the first token (llama-server's return_progress).
  bool report_progress = false;
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
  // The chosen token's rank by the raw logits (RankOf: 1 = the most likely); set for the
  // prompt's tokens (GenerationUpdate::prompt_tokens, but the first), 0 elsewhere.
  int32_t rank = 0;
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
  // Videos only (frames == 0 for an image): frames in the clip, how many were sampled
  // (grid_t pairs of them) and the clip's frame rate.
  int64_t frames = 0, sampled_frames = 0;
  double fps = 0;
  // Its other prompt tokens: the timestamp and the two vision markers of each frame pair.
  // Its budget covers tokens + text_tokens.
  int64_t text_tokens = 0;
  // A clip whose request left its sampling to the server and whose frames at the
  // sampling rate did not fit its budget at a legible size: the frames that rate would
  // have taken, more than sampled_frames (spread over the whole clip instead). 0 when the
  // rate's frames were sampled.
  int64_t frames_at_rate = 0;
  // A video file cut short: the seconds its container declares, more than its frames
  // last (frames / fps, what the model sees); 0 for a whole file.
  double declared_seconds = 0;
  ImageSource source = ImageSource::kEncoder;
  // Frames the decoder decoded (a file decodes those before each sampled one too; a frame
  // list only the sampled ones). Videos only.
  int64_t decoded_frames = 0;
  // Its own share of the request's time: decode_ms reads it (a video: demux, decode,
  // sampling) and makes the patches (resize, normalize), encode_ms runs the vision tower
  // on it (0 when the encoding was reused).
  double decode_ms = 0, encode_ms = 0;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;     // prompt tokens whose KV came from the prefix cache
  int64_t reasoning_tokens = 0;  // of completion_tokens, a Thinking model's reasoning
};

struct Timings {
  double queue_ms = 0;       // prepared -> first scheduled
  double preprocess_ms = 0;  // image decode + resize + patches, tokenization
  double vision_ms = 0;      // vision tower
  double prefill_ms = 0;     // prompt through the decoder
  double decode_ms = 0;      // generated tokens after the first
  double ttft_ms = 0;        // submitted -> first token (preprocessing included)
  double total_ms = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  int64_t draft_tokens = 0;           // guessed ahead (engine/draft_lookup.h)
  int64_t draft_tokens_accepted = 0;  // of those, kept: the sampler picked them too
  std::vector<ImageGrid> images;
  std::vector<ImageGrid> videos;
};

// How far the work before an answer's first token has come: its images' encoding, then its
// prompt read into the KV cache (llama-server's prompt_progress, plus the vision share).
struct PromptProgress {
  int64_t total = 0;      // prompt tokens
  int64_t cached = 0;     // of those, taken from the prefix cache
  int64_t processed = 0;  // in the KV cache so far, the cached ones included
  double vision = 1;      // share of the images' encoding done (1: nothing to encode)
  double elapsed_ms = 0;  // since the request was submitted
};

// A step of progress of one answer of a request. Text arrives in UTF-8-complete pieces
// with stop strings already removed. The last update of each answer has finished == true
// and carries usage and timings (and the error message when finish_reason is kError).
struct GenerationUpdate {
  int choice = 0;  // which of the request's n answers this is about
  std::string text;
  std::vector<GeneratedToken> tokens;
  // A request with prompt_logprobs >= 0: one entry per prompt token, in order, in one
  // update of choice 0 (the first with text or tokens, else its final update, where it is
  // empty when the prompt was not read through: an error, a cancellation). Each entry is
  // the prompt token, its logprob given the tokens before it and the prompt_logprobs most
  // likely tokens there, best first, from the model's raw logits (temperature 1, no
  // penalties, bias or grammar). Entry 0 has no context: its logprob is NaN
  // (std::numeric_limits<float>::quiet_NaN()) and its top is empty.
  std::vector<GeneratedToken> prompt_tokens;
  bool finished = false;
  FinishReason finish_reason = FinishReason::kNone;
  // The stop string that ended the answer (finish_reason kStop), empty when none did:
  // Anthropic's stop_sequence, vLLM's stop_reason.
  std::string stop;
  // The request's stop token id (GenerationRequest::stop_token_ids) that ended the answer;
  // unset when none did, also when an end-of-sequence id did: vLLM's stop_reason.
  std::optional<int32_t> stop_token;
  ErrorCode error_code = ErrorCode::kInternal;
  std::string error;
  Usage usage;
  Timings timings;
  // An embed request's final update: the prompt's embedding, hidden_size floats of unit
  // length (empty when it was cancelled or failed).
  std::vector<float> embedding;
  // Set in the updates of its own (no text) a request with report_progress gets before its
  // first token.
  std::optional<PromptProgress> progress;
};

// Called on the engine thread; must return quickly and never block on the client.
using UpdateSink = std::function<void(GenerationUpdate&&)>;

}  // namespace qvl
