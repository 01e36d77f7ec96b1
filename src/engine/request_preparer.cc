#include "engine/request_preparer.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/field_error.h"
#include "base/timer.h"
#include "engine/prefix_cache.h"
#include "engine/request_ranges.h"
#include "engine/shared_encoding_store.h"
#include "engine/text_limit.h"
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
                                 const EngineOptions& options)
    : model_(model),
      generation_(generation),
      tokenizer_(tokenizer),
      image_params_(image_params),
      options_(options) {
  limits_.max_encoded_bytes = static_cast<int64_t>(options.max_image_bytes);
  limits_.max_decoded_pixels = options.max_image_pixels;
  image_budget_ = ResolveServerImageBudget(options, image_params);
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
    if (!request.images.empty()) Fail(ErrorCode::kInternal, "a raw prompt cannot have images");
  } else if (request.messages.empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages", "must not be empty");
  }
  const int image_parts = CountImageParts(request.messages);
  if (image_parts != static_cast<int>(request.images.size())) {
    Fail(ErrorCode::kInternal, "request has ", image_parts, " image parts but ",
         request.images.size(), " images");
  }
  if (image_parts > options_.max_images_per_request) {
    FailField(ErrorCode::kInvalidArgument, request.images[options_.max_images_per_request].field,
              "too many images: this server accepts at most ", options_.max_images_per_request,
              " per request");
  }
  if (request.max_tokens != 0) {
    ParamRange range = request_ranges::kMaxTokens;
    range.name = request.max_tokens_field.c_str();
    CheckInRange(range, request.max_tokens);
    if (request.max_tokens >= options_.context_tokens) {
      FailField(ErrorCode::kInvalidArgument, request.max_tokens_field, "asks for ",
                request.max_tokens, " tokens, but the context holds ", options_.context_tokens,
                " tokens for prompt and answer together");
    }
  }
  if (request.top_logprobs >= 0) CheckInRange(request_ranges::kTopLogprobs, request.top_logprobs);
  const int64_t text_bytes = request.prompt_text ? static_cast<int64_t>(request.prompt_text->size())
                                                 : MessageTextBytes(request.messages);
  if (text_bytes > max_text_bytes_) {
    FailField(ErrorCode::kInvalidArgument, raw_prompt ? "prompt" : "messages", "the text is ",
              text_bytes, " bytes, more than the context of ", options_.context_tokens,
              " tokens can hold (at most ", max_text_bytes_,
              " bytes: ", max_text_bytes_ / options_.context_tokens,
              " per token at the most); shorten the conversation");
  }
}

void RequestPreparer::CheckPromptTokens(const std::vector<int32_t>& ids) const {
  const int32_t vocab = tokenizer_.vocab_size();
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string field = StrCat("prompt[", i, "]");
    if (ids[i] < 0 || ids[i] >= vocab) {
      FailField(ErrorCode::kInvalidArgument, field, "token id ", ids[i],
                " is not in the vocabulary (0 to ", vocab - 1, ")");
    }
    // Its positions and features come from an image; a prompt of ids has none.
    if (ids[i] == model_.image_token_id) {
      FailField(ErrorCode::kInvalidArgument, field, "token id ", ids[i],
                " is the image placeholder, which needs an image");
    }
  }
}

PreparedRequest RequestPreparer::Prepare(const GenerationRequest& request,
                                         uint64_t fallback_seed) const {
  Stopwatch clock;
  PreparedRequest out;
  CheckSizes(request);

  // Images: decode, resize, patches.
  const int merge = image_params_.merge_size;
  std::vector<int> token_counts;
  std::vector<GridThw> grids;
  ImageWorkspace workspace;
  for (const ImageInput& input : request.images) {
    PreprocessedImage pre;
    try {
      pre = PreprocessImage(input.bytes, image_params_,
                            ImageBudgetFor(image_budget_, request.image_budget, input.detail),
                            limits_, input.name, &workspace);
    } catch (const FieldError&) {
      throw;
    } catch (const Error& e) {
      throw FieldError(e.code(), input.field, e.what());
    }
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
  if (!request.prompt_tokens.empty()) {
    CheckPromptTokens(request.prompt_tokens);
    out.prompt = request.prompt_tokens;
  } else {
    out.prompt = TokenizePrompt(
        tokenizer_,
        request.prompt_text ? *request.prompt_text
                            : RenderChatTemplate(request.messages, /*add_generation_prompt=*/true,
                                                 request.tools_json),
        token_counts);
  }
  const int64_t n = static_cast<int64_t>(out.prompt.size());
  int64_t image_tokens = 0;
  for (int c : token_counts) image_tokens += c;
  if (n + 1 > options_.context_tokens) {
    const bool raw_prompt = request.prompt_text || !request.prompt_tokens.empty();
    FailField(
        ErrorCode::kInvalidArgument, raw_prompt ? "prompt" : "messages", "the prompt is ", n,
        " tokens (", image_tokens, " of them image tokens) but the context holds ",
        options_.context_tokens,
        " tokens for prompt and answer; send fewer or smaller images, or shorten the conversation");
  }
  if (n + request.max_tokens > options_.context_tokens) {
    FailField(ErrorCode::kInvalidArgument, request.max_tokens_field, "the prompt is ", n,
              " tokens (", image_tokens, " of them image tokens) and ", request.max_tokens_field,
              " asks for ", request.max_tokens, ", but the context holds ", options_.context_tokens,
              " tokens for prompt and answer; ask for at most ", options_.context_tokens - n);
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
