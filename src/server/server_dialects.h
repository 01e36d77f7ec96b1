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
// the default), and its repeat_penalty the repetition penalty; vLLM's stop_token_ids,
// min_tokens, include_stop_str_in_output, allowed_token_ids and bad_words are read for
// the engine to check and honour,
// and vLLM's prompt_logprobs (0 to
// 20, null for none; refused with stream, as vLLM refuses it) raises g->prompt_logprobs to
// it; the other sampling extensions of both are refused unless neutral.
void ParseOtherServersGenerationFields(const RequestObject& body, GenerationRequest* g);

// llama-server's name for a link of the sampler chain ("top_k"), as its `samplers` lists it.
std::string_view SamplerStepName(SamplerStep step);

// Guided decoding as vLLM and llama-server ask for it, on /v1/chat/completions (after
// ParseOutputControls) and /v1/completions: a JSON schema as vLLM's guided_json or
// structured_outputs.json, or llama-server's top-level json_schema, compiled as
// response_format's would be; structured_outputs.json_object as json_object; a list of
// strings as guided_choice or structured_outputs.choice (the answer is one of them); a
// regular expression as guided_regex or structured_outputs.regex (the whole answer
// matches it); a GBNF grammar as vLLM's guided_grammar or structured_outputs.grammar, or
// llama-server's grammar (gbnf_grammar.h). Each sets g->grammar; two of them, or one
// beside an output format or a forced tool call, are a 400; structured_outputs' other
// kinds are refused. `text` is the body as sent (a schema's key order).
void ParseGuidedFields(const RequestObject& body, std::string_view text, GenerationRequest* g);

// Fields of a chat request, after ParseOutputControls: the guided-decoding fields
// (ParseGuidedFields); vLLM's continue_final_message, which sets g->continue_final_message
// (the answer continues the final message, CheckContinuedMessages) with
// add_generation_prompt false or left out; with add_generation_prompt true it is a 400,
// as in vLLM. add_generation_prompt false without it and echo are refused; then
// CheckTemplateFields (policy.chat_template), as Ollama's "think" must say what the served
// template does.
void ParseOtherServersChatFields(const RequestObject& body, std::string_view text,
                                 const ChatRequestPolicy& policy, GenerationRequest* g);

// vLLM's template fields of a body that renders messages (chat, the embeddings chat form):
// a per-request chat_template is refused; chat_template_kwargs.enable_thinking must say
// what the served template does.
void CheckTemplateFields(const RequestObject& body, ChatTemplateKind chat_template);

// The fields a refused continuation is blamed on, as each API names them.
struct ContinuationFields {
  std::string_view messages;  // what asked to continue: "continue_final_message", "messages"
  std::string_view grammar;   // what set the grammar: "continue_final_message", "format"
};

// When g.continue_final_message is set, after the messages and the grammar are parsed, so
// that the client hears it before any engine work: throws FieldError naming
// fields.grammar when g has a grammar (it would bind the continuation alone, not the
// message it continues), and fields.messages when RenderContinuedChat cannot continue the
// messages with the served template (the last message is not an assistant one, has tool
// calls or no text, or the template rewrites it).
void CheckContinuedMessages(const GenerationRequest& g, ChatTemplateKind chat_template,
                            const ContinuationFields& fields);

}  // namespace qvl
