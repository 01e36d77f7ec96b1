// Splits a Qwen3 answer into its text and its tool calls while it streams. The model
// calls a tool by writing (chat template, "For each function call ..."):
//   <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
// Text before, between and after calls is content; a block that is not a well-formed
// call (bad JSON, no name) stays content as written, as in vLLM's hermes parser.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

struct ParsedToolCall {
  std::string id;  // "call_" + 24 random characters
  std::string name;
  std::string arguments;  // JSON text of the arguments object
};

// A call's arguments as the object APIs that write them as one (Ollama's, Anthropic's
// tool_use input) need: {} when the text is not a JSON object.
nlohmann::json ArgumentsObject(std::string_view arguments);

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
  // Feed (and Finish when `last`), handing what is now certain to on_text(string_view)
  // and on_call(const ParsedToolCall&) in the order the model wrote it. `scratch` is the
  // caller's buffer, kept between pieces so that no piece allocates.
  template <class OnText, class OnCall>
  void FeedInOrder(std::string_view text, bool last, Output* scratch, OnText&& on_text,
                   OnCall&& on_call) {
    scratch->content.clear();
    scratch->calls.clear();
    scratch->call_offsets.clear();
    Feed(text, scratch);
    if (last) Finish(scratch);
    const std::string_view content = scratch->content;
    size_t written = 0;
    for (size_t i = 0; i < scratch->calls.size(); ++i) {
      on_text(content.substr(written, scratch->call_offsets[i] - written));
      written = scratch->call_offsets[i];
      on_call(scratch->calls[i]);
    }
    on_text(content.substr(written));
  }

  int calls() const { return calls_; }

 private:
  // `body` is the text between the tags: a call, or false.
  bool ParseCall(std::string_view body, Output* out);

  std::string pending_;
  size_t close_from_ = 0;  // where the search for a call's closing tag goes on
  bool in_call_ = false;
  int calls_ = 0;
};

}  // namespace qvl
