#include "engine/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace qvl {

StopMatcher::StopMatcher(std::vector<std::string> stops, bool keep_stop)
    : stops_(std::move(stops)), keep_stop_(keep_stop) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
  for (const std::string& s : stops_) longest_ = std::max(longest_, s.size());
}

std::string StopMatcher::Push(std::string_view text) {
  if (stopped_) return {};
  pending_.append(text);
  if (stops_.empty()) return std::exchange(pending_, {});
  // The match that ends first wins, of those the longest: a stream stops there whatever
  // its pieces, so a stop that would end later (even one starting earlier) never comes.
  size_t cut = std::string::npos;
  size_t end = std::string::npos;
  const std::string* match = nullptr;
  for (const std::string& s : stops_) {
    const size_t at = pending_.find(s);
    if (at == std::string::npos) continue;
    if (at + s.size() < end || (at + s.size() == end && at < cut)) {
      cut = at;
      end = at + s.size();
      match = &s;
    }
  }
  if (match != nullptr) {
    stopped_ = true;
    matched_ = *match;
    // A match ends in the new text (earlier pushes found none), so past what was shown.
    std::string out = pending_.substr(shown_, (keep_stop_ ? end : cut) - shown_);
    pending_.clear();
    shown_ = 0;
    return out;
  }
  // Show all but the longest tail that is a proper prefix of some stop string; when stops
  // are kept, show it too but keep it (and no more) to match against what follows.
  size_t tail = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > tail; --n) {
      if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
        tail = n;
        break;
      }
    }
  }
  const size_t show_end = keep_stop_ ? pending_.size() : pending_.size() - tail;
  std::string out = pending_.substr(shown_, show_end - shown_);
  pending_.erase(0, pending_.size() - tail);
  shown_ = keep_stop_ ? tail : 0;
  return out;
}

std::string StopMatcher::Flush() {
  std::string out = pending_.substr(shown_);
  pending_.clear();
  shown_ = 0;
  return out;
}

}  // namespace qvl
