#include "server/anthropic_route.h"

#include <memory>
#include <string>

#include "engine/request_preparer.h"
#include "server/anthropic_encoder.h"
#include "server/anthropic_request.h"
#include "server/http_reply.h"
#include "server/inline_media.h"
#include "server/openai_format.h"
#include "server/request_id.h"

namespace qvl {
namespace {

// The body as an Anthropic request for the loaded model's limits; answers the error and
// returns false when it is not one.
bool ParseBody(const GenerationRouteContext& context, const Engine& engine, std::string& body,
               AnthropicBody kind, httplib::Response& res, AnthropicRequest* request) {
  try {
    // As on chat completions (chat_route.cc): image payloads go straight to their bytes.
    InlineMedia media = TakeInlineMedia(&body, MediaLayout::kAnthropicMessages);
    ChatRequestPolicy policy = PolicyForEngine(context.policy, engine);
    policy.media.inline_media = &media;
    *request = ParseAnthropicRequest(body, policy, kind);
    return true;
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
    return false;
  }
}

}  // namespace

void HandleAnthropicMessages(const GenerationRouteContext& context, const httplib::Request& req,
                             httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  AnthropicRequest request;
  if (!ParseBody(context, *engine, body, AnthropicBody::kMessages, res, &request)) return;
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, &body, request.generation, *engine);

  AnthropicIdentity identity;
  identity.id = NewCompletionId("msg_");
  identity.model = ResponseModelName(context, request.model);
  AnthropicEncoderOptions options;
  options.stream = request.stream;
  options.parse_tool_calls = request.parse_tool_calls;
  options.split_reasoning = SplitsReasoning(*engine, request.generation);
  RespondWithGeneration(context, engine, std::move(request.generation),
                        std::make_unique<AnthropicEncoder>(std::move(identity), options),
                        request.stream, upload_ms, res, answer_key);
}

void HandleAnthropicCountTokens(const GenerationRouteContext& context, const httplib::Request& req,
                                httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  AnthropicRequest request;
  if (!ParseBody(context, *engine, body, AnthropicBody::kCountTokens, res, &request)) return;
  std::string().swap(body);
  request.generation.request_id = res.get_header_value(kRequestIdHeader);
  try {
    const PreparedRequest prepared = engine->preparer().Prepare(request.generation, 0);
    ReplyJson(res, 200, {{"input_tokens", prepared.prompt.size()}});
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
  }
}

}  // namespace qvl
