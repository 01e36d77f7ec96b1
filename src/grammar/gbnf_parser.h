// GBNF text (llama.cpp's grammar format, which vLLM's xgrammar EBNF also reads) parsed
// into named rules of expressions over Unicode code points. gbnf_grammar.cc checks the
// rules and lowers them to a byte grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/field_error.h"
#include "grammar/json_rules.h"

namespace qvl::grammar {

// Groups nested deeper than this are refused: the parser, the checks and the lowering
// recurse once per level, and hostile input must not exhaust the stack.
inline constexpr int kMaxGbnfNesting = 64;

// The grammar text with the request field it came in: errors read "line L, column C: ..."
// (column in characters, both from 1) under that field.
class GbnfSource {
 public:
  GbnfSource(std::string_view text, const std::string& field) : text_(text), field_(field) {}
  std::string_view text() const { return text_; }

  // "line L, column C" of a byte offset.
  std::string Location(size_t offset) const;

  template <typename... Args>
  [[noreturn]] void FailAt(size_t offset, Args&&... args) const {
    FailField(ErrorCode::kInvalidArgument, field_, Location(offset), ": ",
              std::forward<Args>(args)...);
  }
  // An error about the grammar as a whole.
  template <typename... Args>
  [[noreturn]] void Fail(Args&&... args) const {
    FailField(ErrorCode::kInvalidArgument, field_, std::forward<Args>(args)...);
  }

 private:
  std::string_view text_;
  const std::string& field_;
};

struct GbnfExpr {
  enum class Kind : uint8_t {
    kLiteral,   // `literal`, UTF-8 (empty: matches nothing, consumes nothing)
    kChars,     // one character of `chars`
    kRef,       // the rule `rule`
    kSequence,  // `items` one after another (none: the empty string)
    kChoice,    // one of `items`
    kRepeat,    // items[0] repeated min..max times (max < 0: unbounded)
  };
  Kind kind = Kind::kSequence;
  int32_t id = 0;  // dense, 0 .. GbnfGrammar::expr_count - 1
  size_t at = 0;   // byte offset of its first character in the text
  std::string literal;
  CodepointSet chars;
  int32_t rule = -1;
  std::vector<GbnfExpr> items;
  int64_t min = 0;
  int64_t max = 0;
};

struct GbnfRule {
  std::string name;
  size_t at = 0;  // byte offset of the name in its definition
  GbnfExpr body;
};

struct GbnfGrammar {
  std::vector<GbnfRule> rules;  // in order of first mention
  int32_t root = 0;
  int32_t expr_count = 0;
};

// Throws FieldError through `source` for a syntax error, a rule defined twice or never,
// an empty grammar, or one without a rule `root`.
GbnfGrammar ParseGbnf(const GbnfSource& source);

}  // namespace qvl::grammar
