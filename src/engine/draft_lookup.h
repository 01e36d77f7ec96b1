// Prompt-lookup drafts for speculative decoding: the tokens that followed the most recent
// earlier occurrence of a sequence's last few tokens are a guess at what comes next.
// Answers that quote their prompt or themselves (text read from an image and then
// reformatted, JSON of fields named in the prompt, tables, code edits, follow-ups that
// repeat an earlier answer) guess right for long runs; free text rarely matches, and then
// nothing is drafted. The engine verifies a draft in the decode step's forward pass and
// keeps the tokens the sampler would have chosen anyway, so the answer is unchanged.
// Under a grammar (structured output, tool calls) the bytes it fixes next, such as a
// schema's keys, are the better guess (engine.cc drafts their tokens first).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

namespace qvl {

// A draft is proposed only where the history's last kMaxDraftNgram .. kMinDraftNgram
// tokens occurred before (longest first): one shared token is too weak a clue.
constexpr int kMaxDraftNgram = 4;
constexpr int kMinDraftNgram = 2;

// Drafted rows one decode step verifies over all its sequences (and so the most one
// sequence may draft): with few rows a step is bound by reading the weights and extra
// rows come almost free; with many it turns compute-bound and a rejected row costs what
// a decoded one does.
constexpr int kMaxDraftTokens = 16;
// Bytes of a grammar's fixed continuation tokenized for a draft: more than the longest
// draft's tokens ever take.
constexpr size_t kMaxForcedDraftBytes = 64;

// Writes up to `out.size()` tokens that followed the most recent earlier occurrence of
// the longest matching suffix of `history` into `out`; returns how many (0: no match).
// A draft ends before any token of `never_drafted` (image and video pads, whose rows come
// from the vision tower, not from an embedding).
int LookupDraft(std::span<const int32_t> history, std::span<const int32_t> never_drafted,
                std::span<int32_t> out);

// How many tokens the next draft of a sequence may have (at most the engine's limit):
// any number while its drafts are taken whole, one more than the last draft kept when
// one is cut, so that a sequence whose guesses keep failing costs its decode steps at
// most one extra row.
class DraftLength {
 public:
  int next(int limit) const { return std::min(limit, next_); }
  void Record(int drafted, int accepted);

 private:
  int next_ = std::numeric_limits<int>::max();
};

}  // namespace qvl
