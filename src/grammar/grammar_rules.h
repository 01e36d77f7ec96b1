// The compiled form of a grammar over bytes: rules of alternatives of sequences, where an
// element is a byte set or a reference to a rule (a context-free grammar, as llama.cpp's
// GBNF but over bytes). GrammarBuilder is how the compilers (JSON Schema, tool calls,
// patterns) make one; Grammar is immutable once built and read by the automaton.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

namespace grammar {

struct ByteSet {
  std::array<uint64_t, 4> bits{};

  static ByteSet Of(uint8_t byte) { return Range(byte, byte); }
  static ByteSet Range(uint8_t first, uint8_t last);
  bool Has(uint8_t byte) const { return bits[byte >> 6] >> (byte & 63) & 1; }
  void Add(uint8_t byte) { bits[byte >> 6] |= uint64_t{1} << (byte & 63); }
  void AddRange(uint8_t first, uint8_t last);
  bool Empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
  bool operator==(const ByteSet&) const = default;
};

enum class ElementKind : uint8_t { kEnd, kBytes, kRule };

struct Element {
  ElementKind kind;
  int32_t value;  // byte set index for kBytes, rule id for kRule
};

// A sequence of kBytes / kRule elements (one alternative of a rule).
using Sequence = std::vector<Element>;

Sequence Concat(std::initializer_list<Sequence> parts);

}  // namespace grammar

class Grammar {
 public:
  // Flat rule storage: the alternatives of rule r start at
  // alt_starts[alt_begin[r]] .. alt_starts[alt_begin[r + 1] - 1]; each runs through
  // `elements` up to a kEnd element.
  std::vector<grammar::Element> elements;
  std::vector<int32_t> alt_starts;
  std::vector<int32_t> alt_begin;
  std::vector<grammar::ByteSet> byte_sets;
  // Fewest bytes that complete the alternative from element position i (inclusive).
  std::vector<int32_t> min_rest;
  int32_t root = 0;
  // Bytes that every byte set treats alike share a class; the automaton's transition
  // rows are per class, not per byte.
  std::array<uint8_t, 256> byte_class{};
  std::vector<uint8_t> class_byte;  // one representative byte per class

  // The matching state shared by every matcher of this grammar and one token table
  // (grammar_matcher.cc); created on first use.
  mutable std::mutex runtime_mutex;
  mutable std::shared_ptr<void> runtime;
};

namespace grammar {

// Past these a grammar is refused (FieldError at the root): it would cost too much
// memory to build, let alone to run.
inline constexpr size_t kMaxRules = 200000;
inline constexpr size_t kMaxElements = 2000000;

// Most rules, repetitions and bytes the matcher may enter before the next byte (rules
// that start with rules, parts that may be empty in a sequence or a repetition). The
// automaton expands them all into the stacks of a new state, and a repetition of parts
// that may all be empty makes a new state of about as many stacks after every run it
// reads: past this a grammar would take seconds per token to enforce. GBNF grammars
// (gbnf_checks.h) and patterns (GrammarBuilder::Bounded) are held to it.
inline constexpr int64_t kMaxLeadingParts = 1000;

class GrammarBuilder {
 public:
  // A rule with no alternatives yet (for recursion: refer to it, define it later).
  int32_t NewRule();
  void Define(int32_t rule, std::vector<Sequence> alternatives);
  // Names the schema location a rule comes from, reported when the rule is at fault
  // (a recursion with no finite instance, or one that consumes nothing).
  void SetOrigin(int32_t rule, std::string path);

  Sequence Bytes(const ByteSet& set);
  Sequence Literal(std::string_view bytes);
  static Sequence Ref(int32_t rule) { return {Element{ElementKind::kRule, rule}}; }
  // One alternative is returned as is; more become a new rule.
  Sequence Alt(std::vector<Sequence> alternatives);
  Sequence Optional(Sequence x);
  Sequence Star(Sequence x);
  // x repeated min..max times (max < 0: unbounded); nested optionals keep it unambiguous.
  Sequence Repeat(Sequence x, int64_t min, int64_t max);

  // x as a single element: a rule of its own if it is longer.
  Sequence Shared(Sequence x);

  // The rules made so far; a mark for Bounded.
  int32_t RuleCount() const { return static_cast<int32_t>(rules_.size()); }
  // `body` as a rule of its own, which Build holds with the rules made since
  // `first_rule` (all defined by now) to kMaxLeadingParts entered before a byte from any
  // of their positions, and refuses with FieldError at `path` past it.
  Sequence Bounded(int32_t first_rule, Sequence body, std::string path);

  // Validates and freezes: every rule must have a finite expansion and no rule may reach
  // itself without consuming a byte; throws FieldError naming the rule's origin if not.
  std::shared_ptr<const Grammar> Build(Sequence root);

  const ByteSet& set(int32_t index) const { return sets_[index]; }

 private:
  int32_t SetIndex(const ByteSet& set);

  std::vector<std::vector<Sequence>> rules_;
  std::vector<std::string> origins_;
  std::vector<ByteSet> sets_;
  size_t element_count_ = 0;
  struct BoundedRules {
    int32_t first;
    int32_t end;
    std::string path;
  };
  std::vector<BoundedRules> bounded_;
};

}  // namespace grammar
}  // namespace qvl
