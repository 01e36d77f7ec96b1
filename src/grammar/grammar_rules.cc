#include "grammar/grammar_rules.h"

#include <algorithm>
#include <map>

#include "base/field_error.h"

namespace qvl::grammar {
namespace {

// Finite lengths saturate here: no answer is that long anyway.
constexpr int64_t kLengthCap = int64_t{1} << 30;
// The length of a rule with no finite expansion.
constexpr int64_t kInfinite = INT64_MAX;

}  // namespace

ByteSet ByteSet::Range(uint8_t first, uint8_t last) {
  ByteSet set;
  set.AddRange(first, last);
  return set;
}

void ByteSet::AddRange(uint8_t first, uint8_t last) {
  for (int b = first; b <= last; ++b) Add(static_cast<uint8_t>(b));
}

Sequence Concat(std::initializer_list<Sequence> parts) {
  Sequence out;
  for (const Sequence& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

namespace {

[[noreturn]] void TooLarge() {
  FailField(ErrorCode::kInvalidArgument, "",
            "the schema is too large to enforce (lower maxLength, maxItems, repetition counts "
            "or the number of properties)");
}

}  // namespace

int32_t GrammarBuilder::NewRule() {
  if (rules_.size() >= kMaxRules) TooLarge();
  rules_.emplace_back();
  origins_.emplace_back();
  return static_cast<int32_t>(rules_.size() - 1);
}

void GrammarBuilder::Define(int32_t rule, std::vector<Sequence> alternatives) {
  for (const Sequence& alt : alternatives) element_count_ += alt.size() + 1;
  if (element_count_ > kMaxElements) TooLarge();
  rules_[rule] = std::move(alternatives);
}

void GrammarBuilder::SetOrigin(int32_t rule, std::string path) { origins_[rule] = std::move(path); }

Sequence GrammarBuilder::Bounded(int32_t first_rule, Sequence body, std::string path) {
  const int32_t rule = NewRule();
  Define(rule, {std::move(body)});
  bounded_.push_back({first_rule, rule + 1, std::move(path)});
  return Ref(rule);
}

int32_t GrammarBuilder::SetIndex(const ByteSet& set) {
  for (size_t i = 0; i < sets_.size(); ++i) {
    if (sets_[i] == set) return static_cast<int32_t>(i);
  }
  sets_.push_back(set);
  return static_cast<int32_t>(sets_.size() - 1);
}

Sequence GrammarBuilder::Bytes(const ByteSet& set) {
  return {Element{ElementKind::kBytes, SetIndex(set)}};
}

Sequence GrammarBuilder::Literal(std::string_view bytes) {
  Sequence out;
  for (char c : bytes) out.push_back({ElementKind::kBytes, SetIndex(ByteSet::Of(c))});
  return out;
}

Sequence GrammarBuilder::Alt(std::vector<Sequence> alternatives) {
  if (alternatives.size() == 1) return std::move(alternatives[0]);
  const int32_t rule = NewRule();
  Define(rule, std::move(alternatives));
  return Ref(rule);
}

Sequence GrammarBuilder::Shared(Sequence x) {
  if (x.size() == 1) return x;
  const int32_t rule = NewRule();
  Define(rule, {std::move(x)});
  return Ref(rule);
}

Sequence GrammarBuilder::Optional(Sequence x) { return Alt({std::move(x), {}}); }

Sequence GrammarBuilder::Star(Sequence x) {
  // Right recursion: the reference is last, so the automaton replaces the frame instead of
  // stacking one per repetition.
  const int32_t rule = NewRule();
  x.push_back({ElementKind::kRule, rule});
  Define(rule, {std::move(x), {}});
  return Ref(rule);
}

Sequence GrammarBuilder::Repeat(Sequence x, int64_t min, int64_t max) {
  if (max == 0) return {};
  x = Shared(std::move(x));
  Sequence out;
  if (static_cast<size_t>(min) > kMaxElements) TooLarge();
  for (int64_t i = 0; i < min; ++i) out.insert(out.end(), x.begin(), x.end());
  if (max < 0) {
    const Sequence tail = Star(x);
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  }
  Sequence tail;
  for (int64_t i = min; i < max; ++i) tail = Optional(Concat({x, tail}));
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::shared_ptr<const Grammar> GrammarBuilder::Build(Sequence root_sequence) {
  const int32_t root = NewRule();
  Define(root, {std::move(root_sequence)});
  const size_t rule_count = rules_.size();

  // Shortest expansion of every rule, by relaxation until nothing shrinks.
  std::vector<int64_t> min_length(rule_count, kInfinite);
  const auto sequence_length = [&](const Sequence& seq) {
    int64_t total = 0;
    for (const Element& e : seq) {
      const int64_t length = e.kind == ElementKind::kBytes ? 1 : min_length[e.value];
      if (length == kInfinite) return kInfinite;
      total = std::min(total + length, kLengthCap);
    }
    return total;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rule_count; ++r) {
      for (const Sequence& alt : rules_[r]) {
        const int64_t length = sequence_length(alt);
        if (length < min_length[r]) {
          min_length[r] = length;
          changed = true;
        }
      }
    }
  }
  // A rule with no finite expansion could lead an answer where it can never end.
  for (size_t r = 0; r < rule_count; ++r) {
    if (min_length[r] == kInfinite && !origins_[r].empty()) {
      FailField(ErrorCode::kInvalidArgument, origins_[r],
                "the schema has no finite instance (a required recursion never ends)");
    }
  }
  for (size_t r = 0; r < rule_count; ++r) {
    if (min_length[r] == kInfinite) {
      FailField(ErrorCode::kInvalidArgument, "",
                "the schema has no finite instance (a required recursion never ends)");
    }
  }
  if (min_length[root] >= kLengthCap) TooLarge();

  // A rule that reaches itself before consuming a byte through a reference that stacks a
  // frame (A ::= A x) would grow the stack forever. Through references in last position
  // only (L ::= x L with x nullable, A ::= A | y) it is harmless: the automaton expands
  // each (rule, frame) once.
  //
  // The same walk, post-order, settles what expanding each rule enters before a byte: its
  // costliest alternative, saturated past kMaxLeadingParts. A rule on the path adds
  // nothing, as the automaton expands each (rule, frame) once.
  constexpr int64_t kLeadingCap = kMaxLeadingParts + 1;
  std::vector<int64_t> leading(rule_count, 0);
  const auto part_cost = [&](const Element& e) {
    return e.kind == ElementKind::kBytes ? 1 : 1 + leading[e.value];
  };
  const auto nullable = [&](const Element& e) {
    return e.kind == ElementKind::kRule && min_length[e.value] == 0;
  };
  std::vector<uint8_t> color(rule_count, 0);        // 0 new, 1 on the path, 2 done
  std::vector<int32_t> stacking_at(rule_count, 0);  // stacking refs on the path to the rule
  const auto check_left_recursion = [&](auto&& self, int32_t r, int32_t stacking) -> void {
    color[r] = 1;
    stacking_at[r] = stacking;
    for (const Sequence& alt : rules_[r]) {
      for (size_t i = 0; i < alt.size(); ++i) {
        const Element& e = alt[i];
        if (e.kind == ElementKind::kBytes) break;
        const int32_t next = stacking + (i + 1 < alt.size() ? 1 : 0);
        if (color[e.value] == 1 && next > stacking_at[e.value]) {
          const std::string& origin = !origins_[e.value].empty() ? origins_[e.value] : origins_[r];
          FailField(ErrorCode::kInvalidArgument, origin,
                    "the schema refers to itself without consuming input");
        }
        if (color[e.value] == 0) self(self, e.value, next);
        if (min_length[e.value] > 0) break;
      }
    }
    for (const Sequence& alt : rules_[r]) {
      int64_t run = 0;
      for (const Element& e : alt) {
        run = std::min(run + part_cost(e), kLeadingCap);
        if (!nullable(e)) break;
      }
      leading[r] = std::max(leading[r], run);
    }
    color[r] = 2;
  };
  for (size_t r = 0; r < rule_count; ++r) {
    if (color[r] == 0) check_left_recursion(check_left_recursion, static_cast<int32_t>(r), 0);
  }
  // Expansion resumes at any position, after a byte of the part before it.
  for (const BoundedRules& bounded : bounded_) {
    for (int32_t r = bounded.first; r < bounded.end; ++r) {
      for (const Sequence& alt : rules_[r]) {
        int64_t run = 0;  // from position i up to the first part that cannot be empty
        for (size_t i = alt.size(); i-- > 0;) {
          run = std::min(part_cost(alt[i]) + (nullable(alt[i]) ? run : 0), kLeadingCap);
          if (run <= kMaxLeadingParts) continue;
          FailField(ErrorCode::kInvalidArgument, bounded.path, "more than ", kMaxLeadingParts,
                    " rules and repetitions may be entered before the next character, too many "
                    "to enforce: make each repeated group match at least one character "
                    "((ab?){0,2000}, not (a?b?){0,2000}) or lower its count");
        }
      }
    }
  }

  auto grammar = std::make_shared<Grammar>();
  grammar->root = root;
  grammar->byte_sets = sets_;
  grammar->alt_begin.push_back(0);
  for (size_t r = 0; r < rule_count; ++r) {
    for (const Sequence& alt : rules_[r]) {
      grammar->alt_starts.push_back(static_cast<int32_t>(grammar->elements.size()));
      grammar->elements.insert(grammar->elements.end(), alt.begin(), alt.end());
      grammar->elements.push_back({ElementKind::kEnd, 0});
    }
    grammar->alt_begin.push_back(static_cast<int32_t>(grammar->alt_starts.size()));
  }
  grammar->min_rest.resize(grammar->elements.size());
  int64_t rest = 0;
  for (size_t i = grammar->elements.size(); i-- > 0;) {
    const Element& e = grammar->elements[i];
    if (e.kind == ElementKind::kEnd) {
      rest = 0;
    } else {
      rest = std::min(rest + (e.kind == ElementKind::kBytes ? 1 : min_length[e.value]), kLengthCap);
    }
    grammar->min_rest[i] = static_cast<int32_t>(rest);
  }

  // Byte classes: bytes with the same membership in every set.
  std::map<std::vector<bool>, uint8_t> classes;
  for (int b = 0; b < 256; ++b) {
    std::vector<bool> signature(sets_.size());
    for (size_t s = 0; s < sets_.size(); ++s) signature[s] = sets_[s].Has(static_cast<uint8_t>(b));
    const auto [it, added] = classes.try_emplace(signature, grammar->class_byte.size());
    if (added) grammar->class_byte.push_back(static_cast<uint8_t>(b));
    grammar->byte_class[b] = it->second;
  }
  return grammar;
}

}  // namespace qvl::grammar
