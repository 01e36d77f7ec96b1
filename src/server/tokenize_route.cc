#include "server/tokenize_route.h"

#include <string>
#include <vector>

#include "base/field_error.h"
#include "engine/request_preparer.h"
#include "server/http_reply.h"
#include "server/inline_media.h"
#include "server/openai_format.h"
#include "server/request_id.h"
#include "server/tokenize_request.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace qvl {
namespace {

// A token as llama-server's with_pieces gives it: its text, or its bytes when they are
// not whole UTF-8 (part of a character).
nlohmann::json PieceJson(const Tokenizer& tokenizer, int32_t id) {
  const std::string_view bytes = tokenizer.TokenBytes(id);
  nlohmann::json piece;
  if (text::IsValidUtf8(bytes)) {
    piece = std::string(bytes);
  } else {
    piece = nlohmann::json::array();
    for (const unsigned char c : bytes) piece.push_back(static_cast<int>(c));
  }
  return {{"id", id}, {"piece", std::move(piece)}};
}

nlohmann::json TokenizeJson(const TokenizeRequest& request, const Engine& engine) {
  const Tokenizer& tokenizer = engine.tokenizer();
  std::vector<int32_t> ids;
  nlohmann::json images = nlohmann::json::array();
  nlohmann::json videos = nlohmann::json::array();
  if (request.text) {
    ids = tokenizer.Encode(*request.text);
  } else {
    PreparedRequest prepared = engine.preparer().Prepare(request.chat, 0);
    ids = std::move(prepared.prompt);
    for (const PreparedImage& media : prepared.images) {
      (media.info.frames > 0 ? videos : images).push_back(MediaCostJson(media.info));
    }
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (const int32_t id : ids) {
    tokens.push_back(request.with_pieces ? PieceJson(tokenizer, id) : nlohmann::json(id));
  }
  nlohmann::json out = {{"tokens", std::move(tokens)},
                        {"count", ids.size()},
                        {"max_model_len", engine.options().context_tokens}};
  if (request.token_strs) {
    nlohmann::json strs = nlohmann::json::array();
    for (const int32_t id : ids) strs.push_back(std::string(tokenizer.IdToToken(id)));
    out["token_strs"] = std::move(strs);
  }
  if (!request.text) {
    out["images"] = std::move(images);
    out["videos"] = std::move(videos);
  }
  return out;
}

// The body of /tokenize or /apply-template, read as /tokenize reads it, answered by
// `reply` (on the HTTP thread: neither runs the model).
template <typename Reply>
void HandleTokenizeShaped(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader,
                          const Reply& reply) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  try {
    TokenizeRequest request;
    {
      // Images arrive as on /v1/chat/completions, and are read the same way.
      InlineMedia media = TakeInlineMedia(&body, MediaLayout::kChatCompletions);
      ChatRequestPolicy policy = PolicyForEngine(context.policy, *engine);
      policy.media.inline_media = &media;
      request = ParseTokenizeRequest(body, policy);
    }
    request.chat.request_id = res.get_header_value(kRequestIdHeader);
    std::string().swap(body);
    ReplyJson(res, 200, reply(request, *engine));
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
  }
}

}  // namespace

void HandleTokenize(const GenerationRouteContext& context, const httplib::Request& req,
                    httplib::Response& res, const httplib::ContentReader& reader) {
  HandleTokenizeShaped(context, req, res, reader, TokenizeJson);
}

void HandleApplyTemplate(const GenerationRouteContext& context, const httplib::Request& req,
                         httplib::Response& res, const httplib::ContentReader& reader) {
  HandleTokenizeShaped(
      context, req, res, reader, [](const TokenizeRequest& request, const Engine& engine) {
        if (request.text) {
          FailField(ErrorCode::kInvalidArgument, "messages",
                    "is required: /apply-template renders a conversation");
        }
        return nlohmann::json{{"prompt", engine.preparer().RenderPrompt(request.chat)}};
      });
}

void HandleDetokenize(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  try {
    const Tokenizer& tokenizer = engine->tokenizer();
    const DetokenizeRequest request =
        ParseDetokenizeRequest(body, context.policy.model_names, tokenizer.vocab_size());
    const std::string text = tokenizer.Decode(request.tokens, false);
    ReplyJson(res, 200, {{"prompt", text}, {"content", text}});
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
  }
}

}  // namespace qvl
