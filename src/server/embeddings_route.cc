#include "server/embeddings_route.h"

#include <memory>
#include <string>
#include <string_view>

#include "model/qwen3vl.h"
#include "server/embeddings_encoder.h"
#include "server/embeddings_request.h"
#include "server/http_reply.h"

namespace qvl {
namespace {

using EmbeddingsParser = EmbeddingsRequest (*)(std::string_view, const ChatRequestPolicy&, int64_t);

void Handle(const GenerationRouteContext& context, const httplib::Request& req,
            httplib::Response& res, const httplib::ContentReader& reader, EmbeddingsDialect dialect,
            EmbeddingsParser parse) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  EmbeddingsRequest request;
  try {
    request = parse(body, PolicyForEngine(context.policy, *engine),
                    engine->model().config().text.hidden_size);
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
    return;
  }
  std::string().swap(body);
  const int inputs = static_cast<int>(request.inputs.size());
  if (inputs == 0) {
    // Ollama's clients load a model with an empty input: the answer is ready at once.
    EmbeddingsEncoder empty(dialect, ResponseModelName(context, request.model), 0, false, 0);
    res.set_content(empty.Start(), "application/json");
    return;
  }
  RespondWithGenerations(
      context, engine, std::move(request.inputs),
      std::make_unique<EmbeddingsEncoder>(dialect, ResponseModelName(context, request.model),
                                          inputs, request.base64, request.dimensions),
      false, upload_ms, res);
}

}  // namespace

void HandleEmbeddings(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader) {
  Handle(context, req, res, reader, EmbeddingsDialect::kOpenAI, &ParseEmbeddingsRequest);
}

void HandleOllamaEmbed(const GenerationRouteContext& context, const httplib::Request& req,
                       httplib::Response& res, const httplib::ContentReader& reader) {
  Handle(context, req, res, reader, EmbeddingsDialect::kOllama, &ParseOllamaEmbedRequest);
}

void HandleOllamaEmbeddings(const GenerationRouteContext& context, const httplib::Request& req,
                            httplib::Response& res, const httplib::ContentReader& reader) {
  // The older route has no "dimensions": every value, as Ollama gives.
  Handle(context, req, res, reader, EmbeddingsDialect::kOllamaLegacy,
         [](std::string_view body, const ChatRequestPolicy& policy, int64_t) {
           return ParseOllamaEmbeddingsRequest(body, policy);
         });
}

}  // namespace qvl
