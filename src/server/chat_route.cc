#include "server/chat_route.h"

#include <ctime>
#include <memory>

#include "server/completion_encoder.h"
#include "server/http_reply.h"
#include "server/inline_media.h"

namespace qvl {

void HandleChatCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  ChatRequest request;
  try {
    // Media payloads go straight from the body to their bytes; what the request does not
    // use is freed with `media` at the end of this block.
    InlineMedia media = TakeInlineMedia(&body, MediaLayout::kChatCompletions);
    ChatRequestPolicy policy = PolicyForEngine(context.policy, *engine);
    policy.media.inline_media = &media;
    request = ParseChatRequest(body, policy);
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
    return;
  }
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, &body, request.generation, *engine);

  CompletionIdentity identity;
  identity.id = NewCompletionId();
  identity.created = static_cast<int64_t>(std::time(nullptr));
  identity.model = ResponseModelName(context, request.model);
  EncoderOptions options;
  options.stream = request.stream;
  options.include_usage = request.include_usage;
  options.progress = request.return_progress;
  options.logprobs = request.logprobs;
  options.choices = request.generation.n;
  options.parse_tool_calls = request.parse_tool_calls;
  options.split_reasoning = SplitsReasoning(*engine, request.generation);
  options.prompt_logprobs = request.generation.prompt_logprobs;
  RespondWithGeneration(context, engine, std::move(request.generation),
                        std::make_unique<CompletionEncoder>(std::move(identity), options),
                        request.stream, upload_ms, res, answer_key);
}

}  // namespace qvl
