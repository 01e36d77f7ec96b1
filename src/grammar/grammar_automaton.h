// A grammar run as a lazily built DFA over bytes. A pushdown state is a set of stacks of
// rule positions (llama.cpp's representation: the top of each stack is a byte set to
// match, the frames below are return positions); stacks are hash-consed into a forest of
// frames and each distinct set of stacks becomes one DFA state, whose transitions per byte
// class are computed on first use. Structured output revisits the same few states
// (the inside of a string, a run of digits) token after token, so after a short warm-up
// almost every step is a table lookup.
//
// Local states make masks context-independent where they can be: a state whose stacks all
// run through one frame C (the inside of a string, a value position) is re-rooted on a
// sentinel in place of C. Its masks hold for every context C, except for the tokens that
// pop into C, which the walk marks "popped" and the matcher checks against the full state.
//
// Not thread-safe: the matcher runtime serializes access.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/grammar_rules.h"

namespace qvl::grammar {

class GrammarAutomaton {
 public:
  static constexpr int32_t kDead = -1;

  explicit GrammarAutomaton(const Grammar& grammar);

  int32_t start() const { return start_; }
  const Grammar& grammar() const { return grammar_; }

  // The state after `byte`, or kDead.
  int32_t Step(int32_t state, uint8_t byte) { return StepClass(state, grammar_.byte_class[byte]); }
  int32_t StepClass(int32_t state, int byte_class) {
    const int32_t next = transitions_[static_cast<size_t>(state) * class_count_ + byte_class];
    return next != kUnknown ? next : ComputeStep(state, byte_class);
  }

  // Raw tables for the trie walk's inner loop. The pointers hold until the next
  // ComputeStep, which may grow them; kUnknown marks a transition not computed yet.
  static constexpr int32_t kUnknown = -2;
  const int32_t* transition_table() const { return transitions_.data(); }
  const int32_t* walk_distances() const { return walk_distance_.data(); }
  size_t class_count() const { return class_count_; }
  int32_t ComputeStep(int32_t state, int byte_class);

  // Fewest bytes that complete a sentence from `state`.
  int32_t Distance(int32_t state) const { return states_[state].distance; }
  bool IsComplete(int32_t state) const { return states_[state].complete; }
  // Complete, and no byte may follow.
  bool IsTerminated(int32_t state) const { return states_[state].terminated; }

  // Distance(state), or -1 if some stack of `state` (a local state) returned into its
  // context: one dense load for the trie walk.
  int32_t WalkDistance(int32_t state) const { return walk_distance_[state]; }
  // The local twin of `state`, or kDead if its stacks share no frame; *context_distance
  // is then what the shared frame adds to every local distance.
  int32_t LocalState(int32_t state, int32_t* context_distance);

  size_t MemoryBytes() const;

 private:
  static constexpr int32_t kNoFrame = -1;    // below the bottom frame; as a top: the empty stack
  static constexpr int32_t kPoppedTop = -3;  // a top: returned into the sentinel's context

  struct Frame {
    int32_t position;
    int32_t parent;
    int32_t distance;  // min_rest summed down to the bottom
    int32_t depth;     // frames below, plus one
  };
  struct State {
    uint32_t tops_begin;
    uint32_t tops_count;
    int32_t distance;
    bool complete;
    bool terminated;
    bool popped;
  };

  int32_t InternFrame(int32_t position, int32_t parent);
  // Adds to `out` the tops reached from `position` with the frames below in `parent`,
  // expanding rule references and popping finished alternatives.
  void Expand(int32_t parent, int32_t position, std::vector<int32_t>* out);
  // Expand from a fresh start: forgets which (rule, frame) pairs were expanded.
  void ExpandFrom(int32_t parent, int32_t position, std::vector<int32_t>* out);
  int32_t InternState(std::vector<int32_t>* tops);

  const Grammar& grammar_;
  const size_t class_count_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> frame_ids_;
  std::vector<State> states_;
  std::vector<int32_t> tops_;  // flat, per state sorted
  std::unordered_map<std::string, int32_t> state_ids_;
  std::vector<int32_t> transitions_;  // state * class_count_ + class
  std::vector<int32_t> scratch_;
  // (rule, frame) pairs expanded while one state's tops are gathered (since ExpandFrom, or
  // for every top of a step at once): a second expansion adds nothing, and a loop whose
  // body may be empty would otherwise expand forever.
  std::unordered_set<uint64_t> expanded_;
  int32_t start_;
  int32_t sentinel_;
  // Per state: its local twin (kUnknown until asked) and its context's distance.
  std::vector<int32_t> local_;
  std::vector<int32_t> walk_distance_;
  std::vector<int32_t> context_distance_;
};

}  // namespace qvl::grammar
