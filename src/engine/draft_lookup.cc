#include "engine/draft_lookup.h"

#include <algorithm>

namespace qvl {

int LookupDraft(std::span<const int32_t> history, std::span<const int32_t> never_drafted,
                std::span<int32_t> out) {
  const int64_t len = static_cast<int64_t>(history.size());
  if (out.empty()) return 0;
  for (int n = std::min<int64_t>(kMaxDraftNgram, len - 1); n >= kMinDraftNgram; --n) {
    const std::span<const int32_t> suffix = history.last(n);
    // Most recent first: the latest context is the likeliest to continue the same way.
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), history.begin() + start)) continue;
      int count = 0;
      for (int64_t i = start + n; i < len && count < static_cast<int>(out.size()); ++i) {
        if (std::find(never_drafted.begin(), never_drafted.end(), history[i]) !=
            never_drafted.end()) {
          break;
        }
        out[count++] = history[i];
      }
      if (count > 0) return count;
    }
  }
  return 0;
}

void DraftLength::Record(int drafted, int accepted) {
  if (drafted == 0) return;
  next_ = accepted == drafted ? std::numeric_limits<int>::max() : accepted + 1;
}

}  // namespace qvl
