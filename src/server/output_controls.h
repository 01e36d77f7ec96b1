// The fields of a chat request that shape the answer beyond sampling: `n`,
// `logit_bias`, `response_format` (text, json_object, json_schema) and tool calling
// (`tools`, `tool_choice`, `parallel_tool_calls`). Schemas are compiled to grammars
// here, on the HTTP thread, so a schema qvl cannot honour is a 400 naming the keyword
// before any engine work.
#pragma once

#include <string_view>

#include "engine/request.h"
#include "server/request_fields.h"

namespace qvl {

struct OutputControls {
  bool parse_tool_calls = false;  // tools are offered: answers are split into tool_calls
};

// Reads those fields of `body` into `generation` (n, logit_bias, tools_json, grammar).
// `text` is the body as sent: tool definitions and schemas are re-read from it in the
// client's key order, which the prompt and the grammar keep. Throws FieldError.
OutputControls ParseOutputControls(const RequestObject& body, std::string_view text,
                                   GenerationRequest* generation);

}  // namespace qvl
