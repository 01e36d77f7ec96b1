// Splits a Qwen3 answer into its text and its tool calls while it streams. The model
// calls a tool by writing (chat template, "For each function call ..."):
//   <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
// Text before, between and after calls is content; a block that is not a well-formed
// call (bad JSON, no name) stays content as written, as in vLLM's hermes parser.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qvl {

struct ParsedToolCall {
  std::string id;  // "call_" + 24 random characters
  std::string name;
  std::string arguments;  // JSON text of the arguments object
};

class ToolCallParser {
 public:
  struct Output {
    std::string content;
    std::vector<ParsedToolCall> calls;
    // Where the model wrote each call: calls[i] came right after content[0,
    // call_offsets[i]), for callers that keep text and calls in their order.
    std::vector<size_t> call_offsets;
  };

  // More answer text; appends to `out` what is now certain. Text that may be the start
  // of a call ("<tool" at the end) is held back until the next piece decides it.
  void Feed(std::string_view text, Output* out);
  // The answer ended: what was held back, and a call whose closing tag never came if its
  // JSON is complete.
  void Finish(Output* out);

  int calls() const { return calls_; }

 private:
  // `body` is the text between the tags: a call, or false.
  bool ParseCall(std::string_view body, Output* out);

  std::string pending_;
  bool in_call_ = false;
  int calls_ = 0;
};

}  // namespace qvl
