#include "server/completions_route.h"

#include <ctime>
#include <memory>
#include <string>

#include "server/completion_request.h"
#include "server/http_reply.h"
#include "server/text_completion_encoder.h"

namespace qvl {

void HandleTextCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  CompletionRequest request;
  try {
    request = ParseCompletionRequest(body, PolicyForEngine(context.policy, *engine));
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
    return;
  }
  TextEncoderOptions options;
  options.stream = request.stream;
  options.include_usage = request.include_usage;
  options.logprobs = request.logprobs;
  options.progress = request.return_progress;
  options.prompts = static_cast<int>(request.generations.size());
  options.n = request.generations.front().n;
  if (request.echo) options.echo = PromptTexts(request.generations, engine->tokenizer());
  options.prompt_only = request.prompt_only;
  options.prompt_logprobs = request.prompt_logprobs;
  CompletionIdentity identity;
  identity.id = NewCompletionId("cmpl-");
  identity.created = static_cast<int64_t>(std::time(nullptr));
  identity.model = ResponseModelName(context, request.model);
  // The body is the key, as for chat: everything that shapes the answer is in it or in
  // what AnswerKey adds (the engine's defaults, a raw prompt's mark).
  RespondWithPrompts(
      context, engine, std::move(request.generations),
      std::make_unique<TextCompletionEncoder>(std::move(identity), std::move(options)),
      request.stream, upload_ms, &body, "", res);
}

}  // namespace qvl
