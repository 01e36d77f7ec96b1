// The fields of a chat-shaped request that shape the answer beyond sampling: `n`,
// `logit_bias`, structured output (chat's `response_format`, the Responses API's
// `text.format`: text, json_object, json_schema) and tool calling (`tools`,
// `tool_choice`, `parallel_tool_calls`). Schemas are compiled to grammars here, on the
// HTTP thread, so a schema qvl cannot honour is a 400 naming the keyword before any
// engine work. Every API goes through the same checks; an OutputShape says where each
// of them keeps these fields (Anthropic's, whose format and tool_choice differ more,
// reads its own and offers its tools through OfferToolsUnder).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/request_fields.h"

namespace qvl {

// Most answers one request may ask for (n; on /v1/completions, prompts times n).
inline constexpr int kMaxChoices = 128;

// Where an API keeps a tool's definition: chat nests the name, description and parameters
// under "function" ({"type": "function", "function": {"name", ...}}), as it nests the
// name of a tool_choice function; the Responses API writes them in the tool itself, and
// so does Anthropic's, which calls the parameters "input_schema" and a tool the client
// defines "custom". The chat template is shown every tool in chat's shape.
struct ToolShape {
  const char* function_key;    // "" = flat
  const char* parameters_key;  // the JSON schema of the arguments
  const char* type;            // the "type" of a tool the client defines (the default)
};

inline constexpr ToolShape kChatToolShape{"function", "parameters", "function"};
inline constexpr ToolShape kResponsesToolShape{"", "parameters", "function"};
inline constexpr ToolShape kAnthropicToolShape{"", "input_schema", "custom"};

struct OutputShape {
  // The structured-output object: chat's top-level "response_format", the Responses API's
  // "format" inside the top-level "text".
  const char* format_parent;  // "" = the format object is at the top level
  const char* format_key;
  // json_schema's settings (name, schema, strict): chat nests them under "json_schema"
  // and takes a missing schema as any JSON; the Responses API writes them in the format
  // object itself and requires name and schema.
  const char* json_schema_key;  // "" = in the format object
  ToolShape tools;
};

inline constexpr OutputShape kChatOutputShape{"", "response_format", "json_schema", kChatToolShape};
inline constexpr OutputShape kResponsesOutputShape{"text", "format", "", kResponsesToolShape};

// What tool_choice asks for, whichever API spells it: chat's "auto", "none", "required" or
// a function by name; Anthropic's {"type": auto, none, any or tool}.
struct ToolChoice {
  enum class Kind { kAuto, kNone, kRequired, kNamed };
  Kind kind = Kind::kAuto;
  std::string name;        // kNamed: the tool's name
  std::string name_field;  // kNamed: where the request gave it
  std::string spelled;     // as the client wrote the choice ("required", "any"), for errors
  bool parallel = true;    // an answer may call more than one tool
};

struct OutputControls {
  bool parse_tool_calls = false;  // tools are offered: answers are split into tool_calls
  // The body's "tools" and format object (shape.format_parent, else shape.format_key) in
  // the client's key order; null when neither is given.
  nlohmann::ordered_json ordered;
};

// Reads those fields of `body` into `generation` (n, logit_bias, tools_json, grammar).
// `text` is the body as sent: tool definitions and schemas are re-read from it in the
// client's key order, which the prompt and the grammar keep. Throws FieldError naming
// the field in the request's own shape.
OutputControls ParseOutputControls(const RequestObject& body, std::string_view text,
                                   GenerationRequest* generation,
                                   const OutputShape& shape = kChatOutputShape);

// The pieces of ParseOutputControls that an API of another shape (Ollama's) reuses.

// The top-level "tools" and `format_key` of the body `text` with their keys in the order
// the client wrote them (the checked parse sorted them); null for malformed JSON.
nlohmann::ordered_json OrderedRequestFields(std::string_view text, std::string_view format_key);

// `schema` (in the client's key order) compiled to a grammar, from the cache when it was
// sent before. Throws the schema's FieldError under `field` ("format.properties.x").
std::shared_ptr<const Grammar> CompileSchemaAt(const nlohmann::ordered_json& schema,
                                               const std::string& field);

// The grammar compile() makes, from the same cache when `key` (all it depends on, e.g.
// "regex:" + the pattern) was compiled before. Throws compile()'s FieldError under `field`.
std::shared_ptr<const Grammar> CompileCachedAt(
    const std::string& key, const std::function<std::shared_ptr<const Grammar>()>& compile,
    const std::string& field);

// The body's "tools" in chat's shape offered as tool_choice "auto" offers them (their
// schemas checked, g->tools_json set); `ordered` is OrderedRequestFields' of the body.
// Returns whether any were offered.
bool OfferTools(const RequestObject& body, const nlohmann::ordered_json& ordered,
                GenerationRequest* g);

// The body's "tools" (in `shape`; absent or empty: none) offered under `choice`: their
// schemas checked, g->tools_json set and, when a call is forced, g->grammar to it.
// `format_field` names the structured output the request asked for (g->grammar holds
// it; "" when none), which a forced call cannot be combined with. `ordered` is
// OrderedRequestFields' of the body. Returns whether tools are offered (answers are split
// into tool calls). Throws FieldError; tool_choice naming a tool or asking for one needs
// tools.
bool OfferToolsUnder(const RequestObject& body, const nlohmann::ordered_json& ordered,
                     const ToolShape& shape, const ToolChoice& choice,
                     std::string_view format_field, GenerationRequest* g);

}  // namespace qvl
