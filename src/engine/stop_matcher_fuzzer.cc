// libFuzzer target: StopMatcher on arbitrary stop strings and text fed in pieces the
// input chooses, with the stops cut out and kept. What a client sees (the text shown,
// whether it stopped, which stop matched) must not depend on the pieces, must be the text
// cut where the first stop string to be completed starts (kept: ends), and only a
// possible stop string's start may be held (kept: nothing).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/stop_matcher.h"
#include "text/fuzz_pieces.h"

namespace {

struct Seen {
  std::string text;
  bool stopped = false;
  std::string matched;
  bool operator==(const Seen&) const = default;
};

bool HeldIsAStopStart(std::string_view held, const std::vector<std::string>& stops) {
  if (held.empty()) return true;
  for (const std::string& s : stops) {
    if (held.size() < s.size() && std::string_view(s).starts_with(held)) return true;
  }
  return false;
}

Seen Stream(const std::vector<std::string>& stops, bool keep,
            const std::vector<std::string_view>& pieces) {
  qvl::StopMatcher matcher(stops, keep);
  Seen seen;
  std::string fed;
  for (const std::string_view piece : pieces) {
    const bool was_stopped = matcher.stopped();
    const std::string shown = matcher.Push(piece);
    if (was_stopped && !shown.empty()) std::abort();  // nothing after the stop
    seen.text += shown;
    fed += piece;
    if (!matcher.stopped()) {
      // Only the start of a stop string is held back, and never a whole one.
      if (!std::string_view(fed).starts_with(seen.text)) std::abort();
      const std::string_view held = std::string_view(fed).substr(seen.text.size());
      if (keep ? !held.empty() : !HeldIsAStopStart(held, stops)) std::abort();
    }
  }
  seen.stopped = matcher.stopped();
  const std::string flushed = matcher.Flush();
  if (seen.stopped && !flushed.empty()) std::abort();
  seen.text += flushed;
  seen.matched = matcher.matched();
  return seen;
}

// The reference: the stop that ends first (a stream stops there, so one that would end
// later is never seen), of those the longest, of those the first listed.
Seen Expected(const std::vector<std::string>& stops, bool keep, std::string_view text) {
  size_t best_end = std::string_view::npos;
  size_t best_at = 0;
  const std::string* best = nullptr;
  for (const std::string& s : stops) {
    if (s.empty()) continue;
    const size_t at = text.find(s);
    if (at == std::string_view::npos) continue;
    const size_t end = at + s.size();
    if (end < best_end || (end == best_end && at < best_at)) {
      best_end = end;
      best_at = at;
      best = &s;
    }
  }
  if (best == nullptr) return {std::string(text), false, ""};
  return {std::string(text.substr(0, keep ? best_end : best_at)), true, *best};
}

}  // namespace

// After the piece lengths: a byte k, then k % 5 stop strings, each a length byte (% 12)
// and its bytes; the rest is the text.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<size_t> lengths = qvl::fuzz::TakePieceLengths(&input);
  std::vector<std::string> stops;
  if (!input.empty()) {
    const size_t count = static_cast<uint8_t>(input.front()) % 5;
    input.remove_prefix(1);
    for (size_t i = 0; i < count && !input.empty(); ++i) {
      const size_t n = std::min<size_t>(static_cast<uint8_t>(input.front()) % 12, input.size() - 1);
      stops.emplace_back(input.substr(1, n));
      input.remove_prefix(n + 1);
    }
  }
  const std::string_view text = input;
  for (const bool keep : {false, true}) {
    const Seen whole = Stream(stops, keep, {text});
    if (whole != Expected(stops, keep, text)) std::abort();
    if (Stream(stops, keep, qvl::fuzz::CutIntoPieces(text, lengths)) != whole) std::abort();
    if (Stream(stops, keep, qvl::fuzz::Bytes(text)) != whole) std::abort();
  }
  return 0;
}
