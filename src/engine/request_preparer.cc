#include "engine/request_preparer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/field_error.h"
#include "base/timer.h"
#include "engine/answer_ends.h"
#include "engine/content_hash.h"
#include "engine/image_cache.h"
#include "engine/prefix_cache.h"
#include "engine/request_ranges.h"
#include "engine/shared_encoding_store.h"
#include "engine/text_limit.h"
#include "engine/video_preparer.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

int CountParts(const std::vector<ChatMessage>& messages, ChatPart::Kind kind) {
  int n = 0;
  for (const ChatMessage& m : messages) {
    for (const ChatPart& p : m.parts) n += p.kind == kind ? 1 : 0;
  }
  return n;
}

// Images and videos in the order of their parts, as their pad tokens come in the prompt.
std::vector<PreparedImage> InPromptOrder(const std::vector<ChatMessage>& messages,
                                         std::vector<PreparedImage> images,
                                         std::vector<PreparedImage> videos) {
  std::vector<PreparedImage> out;
  size_t image = 0, video = 0;
  for (const ChatMessage& m : messages) {
    for (const ChatPart& p : m.parts) {
      if (p.kind == ChatPart::Kind::kImage) out.push_back(std::move(images[image++]));
      if (p.kind == ChatPart::Kind::kVideo) out.push_back(std::move(videos[video++]));
    }
  }
  return out;
}

// n, logit_bias and the grammar, checked against the vocabulary and the engine's slots.
void PrepareChoices(const GenerationRequest& request, int64_t vocab, int max_sequences,
                    PreparedRequest* out) {
  if (request.n < 1 || request.n > max_sequences) {
    FailField(ErrorCode::kInvalidArgument, "n", "must be between 1 and ", max_sequences,
              " (the answers this server generates at once, --parallel), got ", request.n);
  }
  out->choices = request.n;
  for (const LogitBias& b : request.logit_bias) {
    const std::string field = StrCat("logit_bias.", b.token);
    CheckTokenId(field, b.token, vocab);
    if (!(b.bias >= -100 && b.bias <= 100)) {
      FailField(ErrorCode::kInvalidArgument, field, "bias must be between -100 and 100, got ",
                b.bias);
    }
  }
  out->logit_bias = request.logit_bias;
  out->grammar = request.grammar;
}

// f(), an error without a field of its own named after the input's request `field`; with
// `invalid_only`, only an invalid-argument one (the others are not the request's doing).
template <typename F>
auto NamingField(const std::string& field, F&& f, bool invalid_only = false) {
  try {
    return f();
  } catch (const FieldError&) {
    throw;
  } catch (const Error& e) {
    if (invalid_only && e.code() != ErrorCode::kInvalidArgument) throw;
    throw FieldError(e.code(), field, e.what());
  }
}

// The checks of CheckEngineOptions that need no model. Without them a context of 0
// divided by zero, and a limit below zero refused every request as the client's fault.
void CheckEngineLimits(const EngineOptions& o) {
  CheckInRange(kContextTokens, static_cast<double>(o.context_tokens));
  const VideoLimits& v = o.video_limits;
  const struct {
    const char* field;
    int64_t value;
    int64_t min;
  } counts[] = {
      {"max_sequences", o.max_sequences, 1},
      {"default_max_tokens", o.default_max_tokens, 1},
      {"default_reasoning_budget", o.default_reasoning_budget, -1},
      {"max_images_per_request", o.max_images_per_request, 0},
      {"video_limits.max_videos_per_request", v.max_videos_per_request, 0},
      {"video_limits.max_encoded_bytes", v.max_encoded_bytes, 1},
      {"video_limits.max_frame_pixels", v.max_frame_pixels, 1},
      {"video_limits.max_input_frames", v.max_input_frames, 1},
  };
  for (const auto& c : counts) {
    if (c.value < c.min) {
      FailField(ErrorCode::kInvalidArgument, c.field, "must be at least ", c.min, ", got ",
                c.value);
    }
  }
  if (!(v.max_seconds > 0) || !std::isfinite(v.max_seconds)) {
    FailField(ErrorCode::kInvalidArgument, "video_limits.max_seconds",
              "must be a positive number of seconds, got ", v.max_seconds);
  }
}

// The chat template's text of a request's messages.
std::string RenderMessages(const GenerationRequest& request, ChatTemplateKind chat_template) {
  if (request.continue_final_message) {
    return RenderContinuedChat(request.messages, request.tools_json, chat_template);
  }
  return RenderChatTemplate(request.messages, request.add_generation_prompt, request.tools_json,
                            chat_template);
}

}  // namespace

void CheckEngineOptions(const EngineOptions& options, const ImageProcessorParams& image_params) {
  CheckEngineLimits(options);
  ResolveServerImageBudget(options, image_params);
  ResolveServerVideoBudget(options);
}

bool OpensReasoning(ChatTemplateKind chat_template, const GenerationRequest& request) {
  return chat_template == ChatTemplateKind::kThinking && request.add_generation_prompt &&
         !request.continue_final_message && !request.prompt_text && request.prompt_tokens.empty();
}

RequestPreparer::RequestPreparer(const ModelConfig& model, const GenerationConfig& generation,
                                 const Tokenizer& tokenizer,
                                 const ImageProcessorParams& image_params,
                                 const VideoProcessorParams& video_params,
                                 const EngineOptions& options, ImageCache* encodings,
                                 ChatTemplateKind chat_template)
    : model_(model),
      generation_(generation),
      tokenizer_(tokenizer),
      image_params_(image_params),
      video_params_(video_params),
      options_(options),
      decode_slots_(options.decode_slots > 0 ? options.decode_slots
                                             : GetCpuFeatures().physical_cores),
      encodings_(encodings),
      chat_template_(chat_template),
      memo_(kMediaMemoEntries) {
  CheckEngineLimits(options);
  limits_.max_encoded_bytes = static_cast<int64_t>(options.max_image_bytes);
  limits_.max_decoded_pixels = options.max_image_pixels;
  image_budget_ = ResolveServerImageBudget(options, image_params);
  video_budget_ = ResolveServerVideoBudget(options);
  max_text_bytes_ = MaxPromptTextBytes(options.context_tokens, LongestTokenBytes(tokenizer));
  eos_ids_ = generation.eos_token_ids;
  for (int32_t id : model.eos_token_ids) {
    if (std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
  }
}

void RequestPreparer::CheckSizes(const GenerationRequest& request) const {
  const bool raw_prompt = request.prompt_text || !request.prompt_tokens.empty();
  if (raw_prompt) {
    if (request.prompt_text && request.prompt_text->empty()) {
      FailField(ErrorCode::kInvalidArgument, "prompt", "must not be empty");
    }
    if (!request.images.empty() || !request.videos.empty()) {
      Fail(ErrorCode::kInternal, "a raw prompt cannot have images or videos");
    }
  } else if (request.messages.empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages", "must not be empty");
  }
  const int image_parts = CountParts(request.messages, ChatPart::Kind::kImage);
  if (image_parts != static_cast<int>(request.images.size())) {
    Fail(ErrorCode::kInternal, "request has ", image_parts, " image parts but ",
         request.images.size(), " images");
  }
  if (image_parts > options_.max_images_per_request) {
    FailField(ErrorCode::kInvalidArgument, request.images[options_.max_images_per_request].field,
              "too many images: this server accepts at most ", options_.max_images_per_request,
              " per request");
  }
  const int video_parts = CountParts(request.messages, ChatPart::Kind::kVideo);
  if (video_parts != static_cast<int>(request.videos.size())) {
    Fail(ErrorCode::kInternal, "request has ", video_parts, " video parts but ",
         request.videos.size(), " videos");
  }
  if (video_parts > options_.video_limits.max_videos_per_request) {
    Fail(ErrorCode::kTooLarge, "the request has ", video_parts, " videos; at most ",
         options_.video_limits.max_videos_per_request, " are accepted");
  }
  if (request.max_tokens != 0) {
    ParamRange range = request_ranges::kMaxTokens;
    range.name = request.max_tokens_field.c_str();
    CheckInRange(range, request.max_tokens);
    if (request.max_tokens >= options_.context_tokens) {
      FailField(ErrorCode::kContextLength, request.max_tokens_field, "asks for ",
                request.max_tokens, " tokens, but the context holds ", options_.context_tokens,
                " tokens for prompt and answer together");
    }
  }
  if (request.top_logprobs >= 0) CheckInRange(request_ranges::kTopLogprobs, request.top_logprobs);
  if (request.prompt_logprobs != -1) {
    CheckInRange(request_ranges::kPromptLogprobs, request.prompt_logprobs);
  }
  const int64_t text_bytes = request.prompt_text ? static_cast<int64_t>(request.prompt_text->size())
                                                 : MessageTextBytes(request.messages);
  if (text_bytes > max_text_bytes_) {
    FailField(ErrorCode::kContextLength, request.messages_field, "the text is ", text_bytes,
              " bytes, more than the context of ", options_.context_tokens,
              " tokens can hold (at most ", max_text_bytes_,
              " bytes: ", max_text_bytes_ / options_.context_tokens,
              " per token at the most); shorten the conversation");
  }
}

void RequestPreparer::CheckPromptTokens(const std::vector<int32_t>& ids) const {
  const int32_t vocab = tokenizer_.vocab_size();
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string field = StrCat("prompt[", i, "]");
    CheckTokenId(field, ids[i], vocab);
    // Its positions and features come from an image or video; a prompt of ids has none.
    if (ids[i] == model_.image_token_id || ids[i] == model_.video_token_id) {
      const bool image = ids[i] == model_.image_token_id;
      FailField(ErrorCode::kInvalidArgument, field, "token id ", ids[i], " is the ",
                image ? "image placeholder, which needs an image"
                      : "video placeholder, which needs a video");
    }
  }
}

std::shared_ptr<const VisionOutput> RequestPreparer::FindShared(const PreparedImage& img) const {
  if (!options_.shared_encodings) return nullptr;
  return options_.shared_encodings->Find({img.content_hash, img.grid.h, img.grid.w});
}

RequestPreparer::Recalled RequestPreparer::Recall(uint64_t memo_key) const {
  Recalled out;
  if (encodings_ == nullptr) return out;
  std::optional<PreparedMedia> media = memo_.Find(memo_key);
  if (!media) return out;
  PreparedImage& img = media->visual;
  img.shared_encoding = encodings_->Find({img.content_hash, img.grid.h, img.grid.w});
  if (img.shared_encoding == nullptr) {
    img.shared_encoding = FindShared(img);
    out.shared_store_asked = true;
  }
  if (img.shared_encoding != nullptr) out.media = std::move(media);
  return out;
}

std::string RequestPreparer::RenderPrompt(const GenerationRequest& request) const {
  if (request.prompt_text) return *request.prompt_text;
  return NamingField(
      request.messages_field, [&] { return RenderMessages(request, chat_template_); }, true);
}

PreparedRequest RequestPreparer::Prepare(const GenerationRequest& request,
                                         uint64_t fallback_seed) const {
  Stopwatch clock;
  PreparedRequest out;
  CheckSizes(request);
  const bool thinking = OpensReasoning(chat_template_, request);

  // Images: decode, resize, patches.
  const int merge = image_params_.merge_size;
  std::vector<int> token_counts;
  std::vector<GridThw> grids;
  ImageWorkspace workspace;
  for (const ImageInput& input : request.images) {
    Stopwatch image_clock;
    const ImageBudget budget = ImageBudgetFor(image_budget_, request.image_budget, input.detail);
    const uint64_t content_hash = ContentHash(input.bytes);
    const uint64_t memo_key = ImageMemoKey(content_hash, budget);
    Recalled recalled = Recall(memo_key);
    PreparedImage img;
    if (recalled.media) {
      img = std::move(recalled.media->visual);
      img.info.decode_ms = image_clock.Millis();
    } else {
      PreprocessedImage pre = NamingField(input.field, [&] {
        const DecodeSlots::Held slot(decode_slots_);
        return PreprocessImage(input.bytes, image_params_, budget, limits_, input.name, &workspace);
      });
      img.SetGeometry(pre.grid_thw, pre.original, pre.resized, merge);
      img.content_hash = content_hash;
      img.info.decode_ms = image_clock.Millis();  // not the shared cache's look-up below
      if (!recalled.shared_store_asked) img.shared_encoding = FindShared(img);
      img.pixels = std::move(pre.pixel_values);
      memo_.Insert(memo_key, img, {});
    }
    token_counts.push_back(static_cast<int>(img.info.tokens));
    grids.push_back(img.grid);
    out.images.push_back(std::move(img));
  }

  // Videos: frames sampled, resized, patches, and their timestamps in the prompt. The
  // budget covers all sampled frames of a video and the text around them.
  std::vector<PreparedImage> videos;
  std::vector<VideoPromptLayout> layouts;
  std::vector<GridThw> video_grids;
  for (const VideoInput& input : request.videos) {
    Stopwatch video_clock;
    const VideoBudget budget = VideoBudgetFor(video_budget_, input.budget, tokenizer_);
    const uint64_t bytes_hash = VideoBytesHash(input);
    const uint64_t memo_key = VideoMemoKey(bytes_hash, input, budget);
    Recalled recalled = Recall(memo_key);
    PreparedVideoInput v;
    if (recalled.media) {
      v.visual = std::move(recalled.media->visual);
      v.layout = std::move(recalled.media->layout);
      v.visual.info.decoded_frames = 0;
      v.visual.info.decode_ms = video_clock.Millis();
    } else {
      v = NamingField(input.field, [&] {
        const DecodeSlots::Held slot(decode_slots_);
        return PrepareVideo(input, bytes_hash, video_params_, budget, options_.video_limits,
                            request.request_id);
      });
      memo_.Insert(memo_key, v.visual, v.layout);
    }
    video_grids.push_back(v.visual.grid);
    layouts.push_back(std::move(v.layout));
    videos.push_back(std::move(v.visual));
  }
  if (!videos.empty()) {
    out.images = InPromptOrder(request.messages, std::move(out.images), std::move(videos));
  }

  // Prompt: chat template, image pads expanded, tokens.
  if (!request.prompt_tokens.empty()) {
    CheckPromptTokens(request.prompt_tokens);
    out.prompt = request.prompt_tokens;
  } else {
    // The text's own placeholders (a literal "<|image_pad|>") against its images.
    out.prompt = NamingField(
        request.messages_field,
        [&] { return TokenizePrompt(tokenizer_, RenderPrompt(request), token_counts, layouts); },
        true);
  }
  const int64_t n = static_cast<int64_t>(out.prompt.size());
  int64_t image_tokens = 0, video_tokens = 0;  // a video's with its timestamps
  for (const PreparedImage& img : out.images) {
    (img.info.frames > 0 ? video_tokens : image_tokens) += img.info.tokens + img.info.text_tokens;
  }
  const std::string visual_tokens = StrCat(
      image_tokens, " of them image tokens",
      request.videos.empty() ? "" : StrCat(", ", video_tokens, " video tokens with timestamps"));
  if (n + 1 > options_.context_tokens) {
    const std::string video_advice =
        request.videos.empty() ? ""
                               : " or fewer video frames (fps, max_frames or num_frames; a "
                                 "lower max_video_tokens),";
    const bool raw_prompt = request.prompt_text || !request.prompt_tokens.empty();
    const std::string advice = raw_prompt ? "shorten the prompt"
                                          : StrCat("send fewer or smaller images,", video_advice,
                                                   " or shorten the conversation");
    FailField(ErrorCode::kContextLength, request.messages_field, "the prompt is ", n, " tokens (",
              visual_tokens, ") but the context holds ", options_.context_tokens,
              " tokens for prompt and answer; ", advice);
  }
  if (n + request.max_tokens > options_.context_tokens) {
    FailField(ErrorCode::kContextLength, request.max_tokens_field, "the prompt is ", n, " tokens (",
              visual_tokens, ") and ", request.max_tokens_field, " asks for ", request.max_tokens,
              ", but the context holds ", options_.context_tokens,
              " tokens for prompt and answer; ask for at most ", options_.context_tokens - n);
  }
  out.positions = ComputeMropePositions(out.prompt, model_.image_token_id, grids, merge,
                                        model_.video_token_id, video_grids);

  // Prefix-cache keys: token ids, and the image's or video's identity for its pad tokens
  // (in prompt order; a video's groups are runs with timestamp text between them).
  out.keys.resize(n);
  size_t visual = 0;
  int64_t pad = 0;  // pad tokens of out.images[visual] seen so far
  for (int64_t i = 0; i < n; ++i) {
    if (out.prompt[i] != model_.image_token_id && out.prompt[i] != model_.video_token_id) {
      out.keys[i] = TextTokenKey(out.prompt[i]);
      continue;
    }
    PreparedImage& img = out.images[visual];
    if (pad == 0) img.first_token = i;
    out.keys[i] = ImageTokenKey(img.content_hash, img.grid.h, img.grid.w, pad);
    if (++pad == img.info.tokens) {
      img.end_token = i + 1;
      ++visual;
      pad = 0;
    }
  }

  out.sampling = ResolveSampling(request.sampling, generation_, fallback_seed);
  const int64_t room = options_.context_tokens - n;
  const int64_t wanted = request.max_tokens > 0 ? request.max_tokens : options_.default_max_tokens;
  // An embedding is read off the prompt's last token: nothing is generated.
  out.output.max_tokens = request.embed ? 0 : static_cast<int>(std::min(wanted, room));
  out.embed = request.embed;
  out.prompt_logprobs = request.embed ? -1 : request.prompt_logprobs;
  out.report_progress = request.report_progress;
  out.output.ignore_eos = request.ignore_eos;
  out.output.top_logprobs = request.top_logprobs;
  out.output.eos_ids = eos_ids_;
  out.output.stop = request.stop;
  out.output.include_stop_str = request.include_stop_str;
  PrepareAnswerEnds(request, model_.text.vocab_size, room, &out.output);
  if (thinking) {
    out.output.reasoning_end = tokenizer_.TokenToId(kReasoningEnd);
    out.output.reasoning_budget = request.reasoning_budget >= 0 ? request.reasoning_budget
                                                                : options_.default_reasoning_budget;
  }
  PrepareChoices(request, model_.text.vocab_size, options_.max_sequences, &out);
  out.bans = PrepareTokenBans(request, tokenizer_, model_.text.vocab_size);
  out.request_id = request.request_id;
  out.preprocess_ms = clock.Millis();
  return out;
}

}  // namespace qvl
