#include "text/reasoning_split.h"

#include <algorithm>

namespace qvl {
namespace {

// The length of the longest end of `text` that starts kReasoningEnd (the whole tag
// excluded: that is found, not held).
size_t PartialTagAtEnd(std::string_view text) {
  for (size_t n = std::min(text.size(), kReasoningEnd.size() - 1); n > 0; --n) {
    if (kReasoningEnd.starts_with(text.substr(text.size() - n))) return n;
  }
  return 0;
}

}  // namespace

void ReasoningSplitter::Feed(std::string_view text, Output* out) {
  std::string reply;  // what follows the tag, when it comes in this piece
  if (state_ == State::kReasoning) {
    // What was held is newlines_ newlines, then at most a tag's start: a tag can begin
    // no earlier than that start, and the newlines need no second look. A long run of
    // newlines is held whole, and scanning it again each piece would cost its square.
    const size_t from = newlines_;
    held_.append(text);
    if (!reasoning_started_) {
      held_.erase(0, std::min(held_.find_first_not_of('\n'), held_.size()));
      reasoning_started_ = !held_.empty();
    }
    const size_t tag = held_.find(kReasoningEnd, std::min(from, held_.size()));
    if (tag == std::string::npos) {
      // Hold a possible tag's start and the newlines before it; the rest is certain.
      const size_t partial = PartialTagAtEnd(held_);
      size_t keep = partial;
      while (keep < held_.size() - from && held_[held_.size() - keep - 1] == '\n') ++keep;
      if (keep == held_.size() - from) keep = held_.size();  // down to the held newlines
      out->reasoning.append(held_, 0, held_.size() - keep);
      held_.erase(0, held_.size() - keep);
      newlines_ = held_.size() - partial;
      return;
    }
    const size_t end = tag == 0 ? std::string::npos : held_.find_last_not_of('\n', tag - 1);
    if (end != std::string::npos) out->reasoning.append(held_, 0, end + 1);
    reply = held_.substr(tag + kReasoningEnd.size());
    held_.clear();
    newlines_ = 0;
    state_ = State::kReplyStart;
    text = reply;
  }
  if (state_ == State::kReplyStart) {
    const size_t start = text.find_first_not_of('\n');
    if (start == std::string_view::npos) return;
    text.remove_prefix(start);
    state_ = State::kReply;
  }
  out->content.append(text);
}

void ReasoningSplitter::Finish(Output* out) {
  if (state_ != State::kReasoning) return;
  const size_t end = held_.find_last_not_of('\n');
  if (end != std::string::npos) out->reasoning.append(held_, 0, end + 1);
  held_.clear();
  newlines_ = 0;
}

}  // namespace qvl
