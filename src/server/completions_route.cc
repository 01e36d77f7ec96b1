#include "server/completions_route.h"

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "server/completion_request.h"
#include "server/http_reply.h"
#include "server/text_completion_encoder.h"
#include "text/tokenizer.h"

namespace qvl {
namespace {

// What echo repeats of each prompt: its text as sent, or the text of its token ids.
std::vector<std::string> EchoedPrompts(const std::vector<GenerationRequest>& prompts,
                                       const Tokenizer& tokenizer) {
  std::vector<std::string> out;
  out.reserve(prompts.size());
  for (const GenerationRequest& g : prompts) {
    out.push_back(g.prompt_text ? *g.prompt_text : tokenizer.Decode(g.prompt_tokens, false));
  }
  return out;
}

}  // namespace

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
  const GenerationRequest& first = request.generations.front();
  TextEncoderOptions options;
  options.stream = request.stream;
  options.include_usage = request.include_usage;
  options.logprobs = request.logprobs;
  options.progress = request.return_progress;
  options.prompts = static_cast<int>(request.generations.size());
  options.n = first.n;
  if (request.echo) options.echo = EchoedPrompts(request.generations, engine->tokenizer());
  options.prompt_only = request.prompt_only;
  options.prompt_logprobs = request.prompt_logprobs;
  CompletionIdentity identity;
  identity.id = NewCompletionId("cmpl-");
  identity.created = static_cast<int64_t>(std::time(nullptr));
  identity.model = ResponseModelName(context, request.model);
  auto encoder = std::make_unique<TextCompletionEncoder>(std::move(identity), std::move(options));
  if (request.generations.size() > 1) {
    std::string().swap(body);
    RespondWithGenerations(context, engine, std::move(request.generations), std::move(encoder),
                           request.stream, upload_ms, res);
    return;
  }
  // The body is the key, as for chat: everything that shapes the answer is in it or in
  // what AnswerKey adds (the engine's defaults, a raw prompt's mark). A stored answer holds
  // no prompt logprobs, so an echo of them is always computed.
  const std::optional<std::string> answer_key =
      first.prompt_logprobs < 0 ? TakeAnswerKey(context, &body, first, *engine) : std::nullopt;
  RespondWithGeneration(context, engine, std::move(request.generations.front()), std::move(encoder),
                        request.stream, upload_ms, res, answer_key);
}

}  // namespace qvl
