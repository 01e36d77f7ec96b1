#include "server/native_completion_route.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/completion_request.h"
#include "server/http_reply.h"
#include "server/native_completion_encoder.h"
#include "server/native_completion_request.h"
#include "server/props.h"
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
  options.prompts = PromptTexts(request.generations, tokenizer);
  options.generation_settings = GenerationSettingsJson(request.generations.front(), *engine);
  options.generation_settings["stream"] = request.stream;
  // n_predict 0 asks the engine for one token, which the result leaves out.
  if (request.prompt_only) options.generation_settings["n_predict"] = 0;
  // The body is the key, as on /v1/completions, marked as this route's: the same body there
  // is another request (16 tokens by default, not the server's length).
  RespondWithPrompts(context, engine, std::move(request.generations),
                     std::make_unique<NativeCompletionEncoder>(std::move(options)), request.stream,
                     upload_ms, &body, "/completion", res);
}

}  // namespace qvl
