#include "engine/request_preparer.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/field_error.h"
#include "base/timer.h"
#include "engine/content_hash.h"
#include "engine/prefix_cache.h"
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
    if (b.token < 0 || b.token >= vocab) {
      FailField(ErrorCode::kInvalidArgument, field, "token id ", b.token,
                " is not in the vocabulary (0 to ", vocab - 1, ")");
    }
    if (!(b.bias >= -100 && b.bias <= 100)) {
      FailField(ErrorCode::kInvalidArgument, field, "bias must be between -100 and 100, got ",
                b.bias);
    }
  }
  out->logit_bias = request.logit_bias;
  out->grammar = request.grammar;
}

}  // namespace

RequestPreparer::RequestPreparer(const ModelConfig& model, const GenerationConfig& generation,
                                 const Tokenizer& tokenizer,
                                 const ImageProcessorParams& image_params,
                                 const VideoProcessorParams& video_params,
                                 const EngineOptions& options)
    : model_(model),
      generation_(generation),
      tokenizer_(tokenizer),
      image_params_(image_params),
      video_params_(video_params),
      options_(options) {
  limits_.max_encoded_bytes = static_cast<int64_t>(options.max_image_bytes);
  limits_.max_decoded_pixels = options.max_image_pixels;
  limits_.max_images_per_request = options.max_images_per_request;
  eos_ids_ = generation.eos_token_ids;
  for (int32_t id : model.eos_token_ids) {
    if (std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
  }
}

ImageBudget RequestPreparer::BudgetFor(const ImageBudgetRequest& request) const {
  ImageBudget b;
  b.min_pixels = request.min_pixels > 0 ? request.min_pixels : options_.min_pixels;
  b.max_pixels = request.max_pixels > 0 ? request.max_pixels : options_.max_pixels;
  // A request may ask for a range on one side of the server's default; keep it valid.
  if (b.min_pixels > 0 && b.max_pixels > 0 && b.min_pixels > b.max_pixels) {
    if (request.min_pixels > 0)
      b.max_pixels = b.min_pixels;
    else
      b.min_pixels = b.max_pixels;
  }
  return b;
}

PreparedRequest RequestPreparer::Prepare(const GenerationRequest& request,
                                         uint64_t fallback_seed) const {
  Stopwatch clock;
  PreparedRequest out;
  if (request.messages.empty()) Fail(ErrorCode::kInvalidArgument, "messages: must not be empty");
  const int image_parts = CountParts(request.messages, ChatPart::Kind::kImage);
  if (image_parts != static_cast<int>(request.images.size())) {
    Fail(ErrorCode::kInternal, "request has ", image_parts, " image parts but ",
         request.images.size(), " images");
  }
  CheckImageCount(image_parts, limits_);
  const int video_parts = CountParts(request.messages, ChatPart::Kind::kVideo);
  if (video_parts != static_cast<int>(request.videos.size())) {
    Fail(ErrorCode::kInternal, "request has ", video_parts, " video parts but ",
         request.videos.size(), " videos");
  }
  if (video_parts > options_.video_limits.max_videos_per_request) {
    Fail(ErrorCode::kTooLarge, "the request has ", video_parts, " videos; at most ",
         options_.video_limits.max_videos_per_request, " are accepted");
  }

  // Images: decode, resize, patches.
  const ImageBudget budget = BudgetFor(request.image_budget);
  const int merge = image_params_.merge_size;
  std::vector<int> token_counts;
  std::vector<GridThw> grids;
  ImageWorkspace workspace;
  for (const ImageInput& input : request.images) {
    PreprocessedImage pre =
        PreprocessImage(input.bytes, image_params_, budget, limits_, input.name, &workspace);
    PreparedImage img;
    img.grid = {pre.grid_thw[0], pre.grid_thw[1], pre.grid_thw[2]};
    img.info.width = pre.original.width;
    img.info.height = pre.original.height;
    img.info.resized_width = pre.resized.width;
    img.info.resized_height = pre.resized.height;
    img.info.grid_t = img.grid.t;
    img.info.grid_h = img.grid.h;
    img.info.grid_w = img.grid.w;
    img.info.tokens = img.grid.tokens(merge);
    img.content_hash = ContentHash(input.bytes);
    img.pixels = std::move(pre.pixel_values);
    token_counts.push_back(static_cast<int>(img.info.tokens));
    grids.push_back(img.grid);
    out.images.push_back(std::move(img));
  }

  // Videos: frames sampled, resized, patches, and their timestamps in the prompt. The
  // budget is the model's video one (video_preprocessor_config.json), over all frames.
  std::vector<PreparedImage> videos;
  std::vector<VideoPromptLayout> layouts;
  std::vector<GridThw> video_grids;
  for (const VideoInput& input : request.videos) {
    PreparedVideoInput v = PrepareVideo(input, video_params_, {}, options_.video_limits);
    video_grids.push_back(v.visual.grid);
    layouts.push_back(std::move(v.layout));
    videos.push_back(std::move(v.visual));
  }
  if (!videos.empty()) {
    out.images = InPromptOrder(request.messages, std::move(out.images), std::move(videos));
  }

  // Prompt: chat template, image pads expanded, tokens.
  const std::string rendered =
      RenderChatTemplate(request.messages, /*add_generation_prompt=*/true, request.tools_json);
  out.prompt = TokenizePrompt(tokenizer_, rendered, token_counts, layouts);
  const int64_t n = static_cast<int64_t>(out.prompt.size());
  if (n + 1 > options_.context_tokens) {
    int64_t image_tokens = 0;
    for (const PreparedImage& img : out.images) image_tokens += img.info.tokens;
    Fail(
        ErrorCode::kInvalidArgument, "the prompt is ", n, " tokens (", image_tokens,
        " of them image tokens) but the context holds ", options_.context_tokens,
        " tokens for prompt and answer; send fewer or smaller images, or shorten the conversation");
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
    out.keys[i] = ImageTokenKey(img.content_hash, pad);
    if (++pad == img.info.tokens) {
      img.end_token = i + 1;
      ++visual;
      pad = 0;
    }
  }

  out.sampling = ResolveSampling(request.sampling, generation_, fallback_seed);
  if (request.max_tokens < 0) Fail(ErrorCode::kInvalidArgument, "max_tokens: must be positive");
  if (request.top_logprobs > 20) Fail(ErrorCode::kInvalidArgument, "top_logprobs: at most 20");
  const int64_t room = options_.context_tokens - n;
  const int64_t wanted = request.max_tokens > 0 ? request.max_tokens : options_.default_max_tokens;
  out.output.max_tokens = static_cast<int>(std::min(wanted, room));
  out.output.ignore_eos = request.ignore_eos;
  out.output.top_logprobs = request.top_logprobs;
  out.output.eos_ids = eos_ids_;
  out.output.stop = request.stop;
  PrepareChoices(request, model_.text.vocab_size, options_.max_sequences, &out);
  out.preprocess_ms = clock.Millis();
  return out;
}

}  // namespace qvl
