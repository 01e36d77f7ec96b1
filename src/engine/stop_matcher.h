// Finds stop strings in streamed text. Text that might be the beginning of a stop string
// is held back until it is clear, so a client never sees part of a stop string. Keeping
// the stop (vLLM's include_stop_str_in_output) shows every byte at once instead, as the
// answer then ends with the stop string wherever one completes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qvl {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops, bool keep_stop = false);

  // Appends `text`; returns what may be shown now. After a match, stopped() is true and
  // the returned text ends right before the stop string, or with it when kept.
  std::string Push(std::string_view text);
  // The held-back text, at the end of generation.
  std::string Flush();
  bool stopped() const { return stopped_; }
  // The stop string that matched (the one ending first, of those the longest, of those
  // the first listed); empty before a match.
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  bool keep_stop_;
  size_t longest_ = 0;
  // The text a stop string may still complete in: its first shown_ bytes were shown
  // (only when stops are kept), the rest is held back.
  std::string pending_;
  size_t shown_ = 0;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace qvl
