#include "engine/text_limit.h"

#include <algorithm>

namespace qvl {

int64_t LongestTokenBytes(const Tokenizer& tokenizer) {
  size_t longest = 1;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    longest = std::max(longest, tokenizer.TokenBytes(id).size());
  }
  return static_cast<int64_t>(longest);
}

int64_t MaxPromptTextBytes(int64_t context_tokens, int64_t longest_token_bytes) {
  return context_tokens * longest_token_bytes * kNfcMaxShrink;
}

int64_t MessageTextBytes(const std::vector<ChatMessage>& messages) {
  int64_t bytes = 0;
  for (const ChatMessage& m : messages) {
    for (const ChatPart& p : m.parts) bytes += static_cast<int64_t>(p.text.size());
    for (const ChatToolCall& c : m.tool_calls) {
      bytes += static_cast<int64_t>(c.name.size() + c.arguments.size());
    }
  }
  return bytes;
}

}  // namespace qvl
