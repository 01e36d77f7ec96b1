#include "server/responses_route.h"

#include <ctime>
#include <memory>

#include "server/http_reply.h"
#include "server/inline_media.h"
#include "server/openai_format.h"
#include "server/responses_encoder.h"
#include "server/responses_request.h"

namespace qvl {

void HandleResponse(const GenerationRouteContext& context, const httplib::Request& req,
                    httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  ResponseStore* store = context.responses;
  StoredConversation stored;
  if (store != nullptr && store->enabled()) {
    stored = [store](const std::string& id) -> std::optional<std::string> {
      std::optional<StoredResponse> found = store->Get(id);
      if (!found) return std::nullopt;
      return std::move(found->conversation);
    };
  }
  ResponsesRequest request;
  try {
    // As on chat completions (chat_route.cc): media payloads go straight to their bytes.
    InlineMedia media = TakeInlineMedia(&body, MediaLayout::kResponses);
    ChatRequestPolicy policy = PolicyForEngine(context.policy, *engine);
    policy.media.inline_media = &media;
    request = ParseResponsesRequest(body, policy, stored);
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
    return;
  }
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, &body, request.generation, *engine);

  ResponsesIdentity identity;
  identity.id = NewCompletionId("resp_");
  identity.created_at = static_cast<int64_t>(std::time(nullptr));
  identity.model = ResponseModelName(context, request.model);
  identity.echo = std::move(request.echo);
  ResponsesEncoderOptions options;
  options.stream = request.stream;
  options.logprobs = request.logprobs;
  options.progress = request.return_progress;
  options.parse_tool_calls = request.parse_tool_calls;
  options.split_reasoning = SplitsReasoning(*engine, request.generation);
  if (request.store) {
    // The conversation a later previous_response_id continues: this one and the answer.
    options.on_done = [store, id = identity.id, conversation = std::move(request.conversation)](
                          const nlohmann::json& response) mutable {
      for (const nlohmann::json& item : response["output"]) conversation.push_back(item);
      store->Put(id, {JsonText(response), JsonText(conversation)});
    };
  }
  RespondWithGeneration(context, engine, std::move(request.generation),
                        std::make_unique<ResponsesEncoder>(std::move(identity), options),
                        request.stream, upload_ms, res, answer_key);
}

}  // namespace qvl
