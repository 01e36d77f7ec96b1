#include "engine/request_preparer.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/timer.h"
#include "engine/prefix_cache.h"
#include "engine/shared_encoding_store.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// The first 64 bits of the image's SHA-256: a content identity that another request
// cannot forge, so cached encodings and KV pages are only ever reused for the same image.
uint64_t ContentHash(std::span<const uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    Fail(ErrorCode::kInternal, "SHA-256 failed");
  }
  uint64_t h;
  std::memcpy(&h, digest, sizeof(h));
  return h;
}

int CountImageParts(const std::vector<ChatMessage>& messages) {
  int n = 0;
  for (const ChatMessage& m : messages) {
    for (const ChatPart& p : m.parts) n += p.kind == ChatPart::Kind::kImage ? 1 : 0;
  }
  return n;
}

}  // namespace

RequestPreparer::RequestPreparer(const ModelConfig& model, const GenerationConfig& generation,
                                 const Tokenizer& tokenizer,
                                 const ImageProcessorParams& image_params,
                                 const EngineOptions& options)
    : model_(model),
      generation_(generation),
      tokenizer_(tokenizer),
      image_params_(image_params),
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
  const int image_parts = CountImageParts(request.messages);
  if (image_parts != static_cast<int>(request.images.size())) {
    Fail(ErrorCode::kInternal, "request has ", image_parts, " image parts but ",
         request.images.size(), " images");
  }
  CheckImageCount(image_parts, limits_);

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
    if (options_.shared_encodings)
      img.shared_encoding =
          options_.shared_encodings->Find({img.content_hash, img.grid.h, img.grid.w});
    img.pixels = std::move(pre.pixel_values);
    token_counts.push_back(static_cast<int>(img.info.tokens));
    grids.push_back(img.grid);
    out.images.push_back(std::move(img));
  }

  // Prompt: chat template, image pads expanded, tokens.
  const std::string rendered = RenderChatTemplate(request.messages, /*add_generation_prompt=*/true);
  out.prompt = TokenizePrompt(tokenizer_, rendered, token_counts);
  const int64_t n = static_cast<int64_t>(out.prompt.size());
  if (n + 1 > options_.context_tokens) {
    int64_t image_tokens = 0;
    for (int c : token_counts) image_tokens += c;
    Fail(
        ErrorCode::kInvalidArgument, "the prompt is ", n, " tokens (", image_tokens,
        " of them image tokens) but the context holds ", options_.context_tokens,
        " tokens for prompt and answer; send fewer or smaller images, or shorten the conversation");
  }
  out.positions = ComputeMropePositions(out.prompt, model_.image_token_id, grids, merge);

  // Prefix-cache keys: token ids, and the image's identity for its pad tokens.
  out.keys.resize(n);
  size_t image = 0;
  for (int64_t i = 0; i < n;) {
    if (out.prompt[i] != model_.image_token_id) {
      out.keys[i] = TextTokenKey(out.prompt[i]);
      ++i;
      continue;
    }
    PreparedImage& img = out.images[image++];
    img.first_token = i;
    for (int64_t k = 0; k < img.info.tokens; ++k, ++i)
      out.keys[i] = ImageTokenKey(img.content_hash, k);
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
  out.preprocess_ms = clock.Millis();
  return out;
}

}  // namespace qvl
