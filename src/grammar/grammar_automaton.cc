#include "grammar/grammar_automaton.h"

#include <algorithm>
#include <climits>

namespace qvl::grammar {

GrammarAutomaton::GrammarAutomaton(const Grammar& grammar)
    : grammar_(grammar), class_count_(grammar.class_byte.size()) {
  sentinel_ = 0;
  frames_.push_back({-1, kNoFrame, 0, 1});
  std::vector<int32_t> tops;
  for (int32_t a = grammar_.alt_begin[grammar_.root]; a < grammar_.alt_begin[grammar_.root + 1];
       ++a) {
    ExpandFrom(kNoFrame, grammar_.alt_starts[a], &tops);
  }
  start_ = InternState(&tops);
}

int32_t GrammarAutomaton::InternFrame(int32_t position, int32_t parent) {
  const uint64_t key =
      static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32 | static_cast<uint32_t>(parent);
  const auto [it, added] = frame_ids_.try_emplace(key, static_cast<int32_t>(frames_.size()));
  if (added) {
    const int64_t below = parent == kNoFrame ? 0 : frames_[parent].distance;
    const int64_t distance = std::min<int64_t>(below + grammar_.min_rest[position], INT32_MAX);
    const int32_t depth = parent == kNoFrame ? 1 : frames_[parent].depth + 1;
    frames_.push_back({position, parent, static_cast<int32_t>(distance), depth});
  }
  return it->second;
}

void GrammarAutomaton::ExpandFrom(int32_t parent, int32_t position, std::vector<int32_t>* out) {
  expanded_.clear();
  Expand(parent, position, out);
}

void GrammarAutomaton::Expand(int32_t parent, int32_t position, std::vector<int32_t>* out) {
  // A worklist, not recursion: the references reached before a byte (rules that start
  // with rules, repetitions of what may be empty) chain as deep as the grammar is large.
  std::vector<std::pair<int32_t, int32_t>> work = {{parent, position}};
  while (!work.empty()) {
    auto [at_parent, at] = work.back();
    work.pop_back();
    // Pop finished alternatives.
    bool returned = false;
    while (grammar_.elements[at].kind == ElementKind::kEnd) {
      if (at_parent == kNoFrame || at_parent == sentinel_) {
        out->push_back(at_parent == kNoFrame ? kNoFrame : kPoppedTop);
        returned = true;
        break;
      }
      at = frames_[at_parent].position;
      at_parent = frames_[at_parent].parent;
    }
    if (returned) continue;
    const Element& element = grammar_.elements[at];
    if (element.kind == ElementKind::kBytes) {
      out->push_back(InternFrame(at, at_parent));
      continue;
    }
    // A reference in last position returns straight to our caller: no frame of its own.
    const int32_t return_position = at + 1;
    const int32_t frame = grammar_.elements[return_position].kind == ElementKind::kEnd
                              ? at_parent
                              : InternFrame(return_position, at_parent);
    const int32_t rule = element.value;
    const uint64_t key =
        static_cast<uint64_t>(static_cast<uint32_t>(rule)) << 32 | static_cast<uint32_t>(frame);
    if (!expanded_.insert(key).second) continue;
    for (int32_t a = grammar_.alt_begin[rule]; a < grammar_.alt_begin[rule + 1]; ++a) {
      work.push_back({frame, grammar_.alt_starts[a]});
    }
  }
}

int32_t GrammarAutomaton::InternState(std::vector<int32_t>* tops) {
  std::sort(tops->begin(), tops->end());
  tops->erase(std::unique(tops->begin(), tops->end()), tops->end());
  if (tops->empty()) return kDead;
  std::string key(reinterpret_cast<const char*>(tops->data()), tops->size() * sizeof(int32_t));
  const auto [it, added] =
      state_ids_.try_emplace(std::move(key), static_cast<int32_t>(states_.size()));
  if (!added) return it->second;
  State state{static_cast<uint32_t>(tops_.size()),
              static_cast<uint32_t>(tops->size()),
              INT32_MAX,
              false,
              false,
              false};
  for (int32_t top : *tops) {
    if (top == kPoppedTop) {
      state.popped = true;
    } else if (top == kNoFrame) {
      state.complete = true;
      state.distance = 0;
    } else {
      state.distance = std::min(state.distance, frames_[top].distance);
    }
  }
  state.terminated = state.complete && tops->size() == 1;
  tops_.insert(tops_.end(), tops->begin(), tops->end());
  states_.push_back(state);
  transitions_.resize(transitions_.size() + class_count_, kUnknown);
  local_.push_back(kUnknown);
  walk_distance_.push_back(state.popped ? -1 : state.distance);
  context_distance_.push_back(0);
  return it->second;
}

int32_t GrammarAutomaton::ComputeStep(int32_t state, int byte_class) {
  const uint8_t byte = grammar_.class_byte[byte_class];
  std::vector<int32_t> next;
  next.swap(scratch_);
  next.clear();
  const State& from = states_[state];
  // One set of expanded (rule, frame) pairs for every top: all feed the same state.
  expanded_.clear();
  for (uint32_t i = 0; i < from.tops_count; ++i) {
    const int32_t top = tops_[from.tops_begin + i];
    if (top < 0) continue;
    const Frame frame = frames_[top];
    if (grammar_.byte_sets[grammar_.elements[frame.position].value].Has(byte)) {
      Expand(frame.parent, frame.position + 1, &next);
    }
  }
  const int32_t result = InternState(&next);
  transitions_[static_cast<size_t>(state) * class_count_ + byte_class] = result;
  scratch_.swap(next);
  return result;
}

int32_t GrammarAutomaton::LocalState(int32_t state, int32_t* context_distance) {
  if (local_[state] == kUnknown) {
    // The deepest frame on every top's chain (below the top frames themselves).
    const State& s = states_[state];
    int32_t context = kUnknown;
    for (uint32_t i = 0; i < s.tops_count && context != kNoFrame; ++i) {
      const int32_t top = tops_[s.tops_begin + i];
      if (top < 0) {
        context = kNoFrame;
        break;
      }
      int32_t chain = frames_[top].parent;
      if (context == kUnknown) {
        context = chain;
        continue;
      }
      while (chain != kNoFrame && context != kNoFrame && chain != context) {
        if (frames_[chain].depth >= frames_[context].depth) {
          chain = frames_[chain].parent;
        } else {
          context = frames_[context].parent;
        }
      }
      if (chain != context) context = kNoFrame;
    }
    int32_t local = kDead;
    if (context != kUnknown && context != kNoFrame) {
      std::vector<int32_t> tops;
      std::vector<int32_t> positions;
      for (uint32_t i = 0; i < s.tops_count; ++i) {
        positions.clear();
        for (int32_t f = tops_[states_[state].tops_begin + i]; f != context;
             f = frames_[f].parent) {
          positions.push_back(frames_[f].position);
        }
        int32_t frame = sentinel_;
        for (size_t p = positions.size(); p-- > 0;) frame = InternFrame(positions[p], frame);
        tops.push_back(frame);
      }
      local = InternState(&tops);
      context_distance_[state] = frames_[context].distance;
    }
    local_[state] = local;
  }
  *context_distance = context_distance_[state];
  return local_[state];
}

size_t GrammarAutomaton::MemoryBytes() const {
  return frames_.size() * (sizeof(Frame) + 32) + states_.size() * (sizeof(State) + 48) +
         tops_.size() * 2 * sizeof(int32_t) + transitions_.size() * sizeof(int32_t);
}

}  // namespace qvl::grammar
