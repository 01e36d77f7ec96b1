#include "server/native_completion_route.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/http_reply.h"
#include "server/native_completion_encoder.h"
#include "server/native_completion_request.h"
#include "text/tokenizer.h"

namespace qvl {

void HandleNativeCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                            httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  const Tokenizer& tokenizer = engine->tokenizer();
  NativeCompletionRequest request;
  try {
    request = ParseNativeCompletionRequest(
        body, PolicyForEngine(context.policy, *engine),
        [&tokenizer](std::string_view text) { return tokenizer.Encode(text); });
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
    return;
  }
  NativeEncoderOptions options;
  options.stream = request.stream;
  options.progress = request.return_progress;
  options.n_probs = request.n_probs;
  options.return_tokens = request.return_tokens;
  options.prompt_only = request.prompt_only;
  options.model = ResponseModelName(context, request.model);
  for (const GenerationRequest& g : request.generations) {
    options.prompts.push_back(g.prompt_text ? *g.prompt_text
                                            : tokenizer.Decode(g.prompt_tokens, false));
  }
  auto encoder = std::make_unique<NativeCompletionEncoder>(std::move(options));
  if (request.generations.size() > 1) {
    std::string().swap(body);
    RespondWithGenerations(context, engine, std::move(request.generations), std::move(encoder),
                           request.stream, upload_ms, res);
    return;
  }
  // The body is the key, as on /v1/completions, marked as this route's: the same body there
  // is another request (16 tokens by default, not the server's length).
  nlohmann::json marked = nlohmann::json::parse(body);
  marked["qvl_route"] = "/completion";
  std::string keyed = marked.dump();
  std::string().swap(body);
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, &keyed, request.generations.front(), *engine);
  RespondWithGeneration(context, engine, std::move(request.generations.front()), std::move(encoder),
                        request.stream, upload_ms, res, answer_key);
}

}  // namespace qvl
