// `qvl run` without a prompt, at a terminal: a chat, as `ollama run` opens one. Each
// question is asked with the conversation so far (its images and videos included), so a
// follow-up reuses what the engine has cached of the earlier turns: the encoded images
// and the prompt's KV cache.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/terminal_answer.h"
#include "engine/engine.h"

namespace qvl::cli {

struct ChatAttachment {
  std::string path;
  std::string bytes;
  bool video = false;
};

// The turns so far. Copyable, no engine: what a question is asked with.
class ChatConversation {
 public:
  // Starts a new conversation under `system` (empty: none).
  void SetSystem(std::string system);
  void Clear() { turns_.clear(); }
  size_t turns() const { return turns_.size(); }

  // The request that asks `question`, with `media` attached before its text, after the
  // turns so far.
  GenerationRequest Ask(const std::string& question,
                        const std::vector<ChatAttachment>& media) const;
  // Keeps a turn: the question as asked and the answer as the model wrote it.
  void Add(std::string question, std::vector<ChatAttachment> media, std::string answer);

 private:
  struct Turn {
    std::string question;
    std::vector<ChatAttachment> media;
    std::string answer;
  };
  std::string system_;
  std::vector<Turn> turns_;
};

struct ChatOptions {
  AnswerDisplay display;
  std::string system;
  std::vector<ChatAttachment> media;  // -i / -v: attached to the first question
  // The run's flags (sampling, lengths, stops) applied to each question's request.
  std::function<void(GenerationRequest*)> apply_flags;
};

// SIGINT, from now on, is the chat's (a question being typed, an answer being written)
// rather than the end of the process. To be called on the main thread before any other
// thread starts: it is blocked for all of them, and RunChat reads it from a signalfd.
void KeepInterruptsForChat();

// Reads questions from stdin until /bye or its end, answering each on stdout.
void RunChat(Engine& engine, const ChatOptions& options);

}  // namespace qvl::cli
