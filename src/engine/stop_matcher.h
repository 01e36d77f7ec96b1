// Finds stop strings in streamed text. Text that might be the beginning of a stop string
// is held back until it is clear, so a client never sees part of a stop string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qvl {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends `text`; returns what may be shown now. After a match, stopped() is true and
  // the returned text ends right before the stop string.
  std::string Push(std::string_view text);
  // The held-back text, at the end of generation.
  std::string Flush();
  bool stopped() const { return stopped_; }
  // The stop string that matched (the one ending first, of those the longest, of those
  // the first listed); empty before a match.
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  size_t longest_ = 0;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace qvl
