// The building blocks of JSON grammars, shared by the schema compiler, the pattern
// compiler and the tool-call grammar: bounded whitespace, string characters (valid UTF-8,
// JSON escapes), numbers, and "any value". Each common rule is made once per grammar.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/grammar_rules.h"

namespace qvl::grammar {

// Unicode scalar values as sorted, disjoint, inclusive ranges (surrogates never included).
class CodepointSet {
 public:
  static CodepointSet All();
  void Add(char32_t first, char32_t last);
  void Add(const CodepointSet& other);
  CodepointSet Complement() const;
  CodepointSet Intersect(const CodepointSet& other) const;
  bool Empty() const { return ranges_.empty(); }
  const std::vector<std::pair<char32_t, char32_t>>& ranges() const { return ranges_; }

 private:
  void Normalize();
  std::vector<std::pair<char32_t, char32_t>> ranges_;
};

// Longest whitespace run between JSON tokens: a newline and this much indentation.
inline constexpr int kMaxIndent = 20;
// Digits of an unbounded integer part, fraction or exponent: enough for any int64 or
// double, few enough that a model cannot spin on digits.
inline constexpr int kMaxIntegerDigits = 16;
inline constexpr int kMaxFractionDigits = 16;
inline constexpr int kMaxExponentDigits = 2;

class JsonRules {
 public:
  explicit JsonRules(GrammarBuilder* builder) : b_(*builder) {}
  GrammarBuilder& builder() { return b_; }

  // "", " ", or "\n" then up to kMaxIndent spaces or tabs.
  Sequence Space();
  // One character of a JSON string: a raw UTF-8 character other than '"', '\\' and
  // controls, or an escape (\uXXXX never a surrogate, so parsers accept it).
  Sequence StringChar();
  // A whole string with min..max characters (max < 0: unbounded).
  Sequence String(int64_t min_length = 0, int64_t max_length = -1);
  // A JSON-encoded character whose value is in `set`, written one way only: escaped
  // where JSON requires it, else raw UTF-8.
  Sequence CharIn(const CodepointSet& set);
  // Raw UTF-8 of any code point in `set` (no escaping).
  Sequence Utf8(const CodepointSet& set);
  Sequence Number();
  Sequence Integer();
  Sequence Boolean();
  Sequence Null() { return b_.Literal("null"); }
  Sequence Value();
  Sequence Object();
  Sequence Array();
  // Digits [1-9][0-9]* (or 0) of an integer in [lo, hi] (hi nullopt: up to
  // kMaxIntegerDigits digits); lo >= 0. Empty alternatives list if there is none.
  std::vector<Sequence> Digits(uint64_t lo, std::optional<uint64_t> hi);
  // Fraction digits: any, or at least one nonzero, or all zeros.
  Sequence AnyFraction();      // (\.[0-9]{1,16})?
  Sequence NonzeroFraction();  // \.0*[1-9][0-9]*  (bounded)
  Sequence ZeroFraction();     // (\.0{1,16})?
  Sequence Digit() { return b_.Bytes(ByteSet::Range('0', '9')); }

 private:
  Sequence SameLengthDigits(std::string_view low, std::string_view high);

  GrammarBuilder& b_;
  std::optional<int32_t> space_, string_char_, string_, number_, integer_, value_, object_, array_;
};

}  // namespace qvl::grammar
