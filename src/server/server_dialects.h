// Request fields of the servers qvl replaces, which their users' code and clients keep
// sending: vLLM's extensions (guided_json, structured_outputs, stop_token_ids, min_tokens,
// chat_template_kwargs, ...) and llama-server's (n_predict, json_schema, grammar). An
// unknown field is ignored, so each of these that changes the answer is either read as
// the qvl field that does the same thing, or refused with a 400 naming it, never
// silently dropped: a guided_json that did nothing would pass for JSON output that was
// asked for.
#pragma once

#include <string_view>

#include "engine/request.h"
#include "server/chat_request.h"
#include "server/request_fields.h"

namespace qvl {

// Fields of any generation request (/v1/chat/completions, /v1/completions): llama-server's
// n_predict is the token limit when no max_tokens is given (-1 and -2, "until the end",
// the default); vLLM's stop_token_ids and min_tokens are read for the engine to check and
// honour; vLLM's other sampling extensions are refused unless neutral.
void ParseOtherServersGenerationFields(const RequestObject& body, GenerationRequest* g);

// Fields of a chat request, after ParseOutputControls: a JSON schema given as vLLM's
// guided_json or structured_outputs.json, or as llama-server's top-level json_schema, is
// compiled as response_format's would be (unless an output format or a forced tool call
// is already set: 400); guided_choice, guided_regex, guided_grammar, the other
// structured_outputs kinds and llama-server's grammar are refused; so are a per-request
// chat_template, continue_final_message, add_generation_prompt: false and echo.
// chat_template_kwargs.enable_thinking must say what the served template does
// (policy.chat_template), as Ollama's "think" must.
void ParseOtherServersChatFields(const RequestObject& body, std::string_view text,
                                 const ChatRequestPolicy& policy, GenerationRequest* g);

}  // namespace qvl
