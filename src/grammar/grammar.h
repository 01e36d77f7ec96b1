// Structured output: grammars over bytes compiled from JSON Schemas, tool definitions,
// regular expressions and lists of choices, which GrammarMatcher (grammar_matcher.h)
// turns into token masks.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace qvl {

// A compiled grammar over bytes: immutable, shared by many requests.
class Grammar;

// JSON Schema -> grammar accepting exactly the JSON texts that satisfy it (whitespace
// between tokens bounded; object properties in the schema's order). Throws
// FieldError(kInvalidArgument, path, message), path being the location inside the schema
// ("properties.address.pattern", "items.anyOf[1].minLength"; empty for the root), for a
// malformed schema or a keyword that constrains values in a way it cannot honour;
// annotations are ignored. Never a looser grammar than the schema.
std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::json& schema);
// The same keeping the schema's property order (nlohmann::json sorts object keys, so
// properties would come out alphabetically): parse the request with ordered_json to keep it.
std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema);

// Any JSON object (response_format json_object). One shared instance.
std::shared_ptr<const Grammar> JsonObjectGrammar();

// vLLM's guided_regex: the texts `pattern` matches whole (full match, raw UTF-8; the
// syntax of JSON Schema's "pattern", pattern_grammar.h). Throws
// FieldError(kInvalidArgument, "", message) for a pattern it cannot honour.
std::shared_ptr<const Grammar> CompileRegex(std::string_view pattern);

// vLLM's guided_choice: exactly one of `choices`, byte for byte. Throws
// FieldError(kInvalidArgument, "", message) when there is none.
std::shared_ptr<const Grammar> CompileChoice(std::span<const std::string> choices);

// Tool calls in Qwen3's format, for tool_choice "required" or a named function:
//   <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>
// ARGS is a JSON object matching the function's `parameters` (null or {} = any object);
// with `parallel`, one or more calls separated by "\n". Throws like CompileJsonSchema,
// with paths "tools[i].function.parameters...." (i the index in `tools`).
struct ToolSchema {
  std::string name;
  nlohmann::ordered_json parameters;  // in the client's key order, which the arguments keep
  // Where `parameters` sits in the request, for error paths; empty: the default above.
  std::string parameters_path;
};
std::shared_ptr<const Grammar> CompileToolCallGrammar(std::span<const ToolSchema> tools,
                                                      bool parallel);

}  // namespace qvl
