#include "server/chat_request.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/chat_messages.h"
#include "server/generation_fields.h"
#include "server/media_fields.h"
#include "server/output_controls.h"
#include "server/reasoning_effort.h"
#include "server/request_fields.h"
#include "server/server_dialects.h"

namespace qvl {
namespace {

// Features that change the answer: refused rather than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (body.Find("audio") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "audio", "is not supported by this server");
  }
  if (const nlohmann::json* modalities = body.Find("modalities")) {
    RequireArray(*modalities, "modalities");
    for (size_t i = 0; i < modalities->size(); ++i) {
      if ((*modalities)[i] != "text") {
        FailField(ErrorCode::kInvalidArgument, IndexField("modalities", i),
                  "only \"text\" output is supported");
      }
    }
  }
}

}  // namespace

ChatRequest ParseChatRequest(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  ChatRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  out.parse_tool_calls = ParseOutputControls(body, text, &g).parse_tool_calls;
  const StreamFields stream = ParseGenerationFields(body, policy.max_stop_strings, &g);
  out.stream = stream.stream;
  out.include_usage = stream.include_usage;
  const bool progress = body.Bool("return_progress").value_or(false);
  out.return_progress = out.stream && progress;
  g.report_progress = out.return_progress;
  out.logprobs = body.Bool("logprobs").value_or(false);
  const auto top_logprobs = body.Int(request_ranges::kTopLogprobs.name, 0,
                                     static_cast<int64_t>(request_ranges::kTopLogprobs.max));
  if (top_logprobs && !out.logprobs) {
    FailField(ErrorCode::kInvalidArgument, "top_logprobs", "needs \"logprobs\": true");
  }
  g.top_logprobs = out.logprobs ? static_cast<int>(top_logprobs.value_or(0)) : -1;
  ParseOtherServersGenerationFields(body, &g);
  // A budget in tokens says more than a level: thinking_token_budget wins.
  const std::optional<ReasoningEffort> effort = ParseReasoningEffort(body, "reasoning_effort");
  if (effort && g.reasoning_budget < 0) g.reasoning_budget = effort->budget;
  ParseOtherServersChatFields(body, text, policy, &g);
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);

  const nlohmann::json* messages = body.Find("messages");
  if (messages == nullptr) FailField(ErrorCode::kInvalidArgument, "messages", "is required");
  const MessageLimits limits = MessageLimitsOf(policy);
  const VideoInput video_defaults = ParseVideoDefaults(body, policy.pixels_per_video_token);
  ParseChatMessages(*messages, limits, &g.messages, &g.images, &g.videos);
  CheckContinuedMessages(g, policy.chat_template,
                         {"continue_final_message", "continue_final_message"});
  ApplyVideoDefaults(video_defaults, &g.videos);
  return out;
}

}  // namespace qvl
