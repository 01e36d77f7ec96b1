// Turns the engine's updates for one /v1/responses request into the bytes of its HTTP
// response: OpenAI's Response object, or the stream of typed server-sent events that
// builds it (response.created, response.in_progress, output_item.added,
// content_part.added, output_text.delta ... output_text.done, content_part.done,
// output_item.done, function_call_arguments.delta / .done for tool calls, and
// response.completed / response.incomplete / response.failed), each with its
// sequence_number. The answer's text becomes one "message" output item; with tools
// offered it goes through a ToolCallParser and each call becomes a "function_call" item.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"

namespace qvl {

struct ResponsesIdentity {
  std::string id;          // "resp_..." (NewCompletionId("resp_"))
  int64_t created_at = 0;  // Unix seconds
  std::string model;
  // ResponsesRequest::echo: the settings the Response object repeats.
  nlohmann::json echo = nlohmann::json::object();
};

struct ResponsesEncoderOptions {
  bool stream = false;
  bool logprobs = false;
  bool parse_tool_calls = false;
};

class ResponsesEncoder : public ResponseEncoder {
 public:
  ResponsesEncoder(ResponsesIdentity identity, const ResponsesEncoderOptions& options);

  // Streamed: response.created and response.in_progress; else "".
  std::string Start() override;
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  ResponsesIdentity identity_;
  ResponsesEncoderOptions options_;
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
