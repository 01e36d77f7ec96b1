#include "grammar/gbnf_parser.h"

#include <unordered_map>

#include "grammar/pattern_grammar.h"
#include "text/utf8.h"

namespace qvl::grammar {
namespace {

constexpr char32_t kMaxCodepoint = 0x10FFFF;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class GbnfParser {
 public:
  explicit GbnfParser(const GbnfSource& source) : src_(source), text_(source.text()) {}

  GbnfGrammar Parse() {
    for (size_t pos = 0; pos < text_.size();) {
      const text::Utf8Sequence seq = text::ScanUtf8(text_, pos);
      if (seq.status != text::Utf8Status::kValid)
        src_.FailAt(pos, "the grammar is not valid UTF-8");
      pos += seq.length;
    }
    SkipSpace();
    if (AtEnd()) src_.Fail("the grammar is empty: it needs at least the rule `root ::= ...`");
    while (!AtEnd()) Rule();

    const RuleInfo* undefined = nullptr;
    for (const RuleInfo& rule : rules_) {
      if (!rule.defined && (undefined == nullptr || rule.first_use < undefined->first_use)) {
        undefined = &rule;
      }
    }
    if (undefined != nullptr) {
      src_.FailAt(undefined->first_use, "undefined rule `", undefined->name,
                  "` referenced in rule `", rules_[undefined->used_in].name, "`");
    }
    const auto root = ids_.find("root");
    if (root == ids_.end()) {
      src_.Fail("the grammar has no rule `root` (the rule the whole output must match)");
    }
    GbnfGrammar out;
    out.root = root->second;
    out.expr_count = expr_count_;
    for (RuleInfo& rule : rules_) {
      out.rules.push_back({std::move(rule.name), rule.at, std::move(rule.body)});
    }
    return out;
  }

 private:
  struct RuleInfo {
    std::string name;
    bool defined = false;
    size_t at = 0;  // the definition's name
    GbnfExpr body;
    size_t first_use = 0;  // the first reference, if not defined
    int32_t used_in = 0;
  };

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool Eat(char c) {
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }

  // Whitespace, newlines included (a rule ends where the next `name ::=` starts), and
  // comments from '#' to the end of the line.
  void SkipSpace() {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == '#') {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  // The offset just past `name ::=` if one starts at `pos`, else 0.
  size_t RuleStartEnd(size_t pos) const {
    size_t p = pos;
    while (p < text_.size() && IsNameChar(text_[p])) ++p;
    if (p == pos) return 0;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p, 3) == "::=" ? p + 3 : 0;
  }

  int32_t RuleId(std::string_view name) {
    const auto [it, added] = ids_.try_emplace(name, static_cast<int32_t>(rules_.size()));
    if (added) {
      rules_.emplace_back();
      rules_.back().name = name;
    }
    return it->second;
  }

  void Rule() {
    const size_t at = pos_;
    const size_t body = RuleStartEnd(pos_);
    if (body == 0) {
      if (!IsNameChar(Peek())) {
        src_.FailAt(pos_, "expected a rule name (letters, digits, '-' and '_') starting a rule");
      }
      while (!AtEnd() && IsNameChar(Peek())) ++pos_;
      const std::string_view name = text_.substr(at, pos_ - at);
      while (!AtEnd() && (Peek() == ' ' || Peek() == '\t')) ++pos_;
      src_.FailAt(pos_, "expected '::=' after the rule name `", name, "`");
    }
    size_t name_end = at;
    while (IsNameChar(text_[name_end])) ++name_end;
    const int32_t id = RuleId(text_.substr(at, name_end - at));
    if (rules_[id].defined) {
      src_.FailAt(at, "rule `", rules_[id].name, "` is defined twice (first at ",
                  src_.Location(rules_[id].at), ")");
    }
    rules_[id].defined = true;
    rules_[id].at = at;
    pos_ = body;
    SkipSpace();
    rule_ = id;
    GbnfExpr expr = Alternatives(0);
    if (!AtEnd() && Peek() == ')') src_.FailAt(pos_, "')' without a matching '('");
    rules_[id].body = std::move(expr);
  }

  GbnfExpr Make(GbnfExpr::Kind kind, size_t at) {
    GbnfExpr expr;
    expr.kind = kind;
    expr.id = expr_count_++;
    expr.at = at;
    return expr;
  }

  // A choice or sequence of one item is the item: ids go only to expressions kept.
  GbnfExpr Group(GbnfExpr::Kind kind, size_t at, std::vector<GbnfExpr> items) {
    if (items.size() == 1) return std::move(items[0]);
    GbnfExpr group = Make(kind, at);
    group.items = std::move(items);
    return group;
  }

  GbnfExpr Alternatives(int depth) {
    const size_t at = pos_;
    std::vector<GbnfExpr> alternatives;
    alternatives.push_back(Sequence(depth));
    while (Eat('|')) {
      SkipSpace();
      alternatives.push_back(Sequence(depth));
    }
    return Group(GbnfExpr::Kind::kChoice, at, std::move(alternatives));
  }

  GbnfExpr Sequence(int depth) {
    const size_t at = pos_;
    std::vector<GbnfExpr> items;
    bool repeated = false;
    while (!AtEnd() && Peek() != '|' && Peek() != ')' && RuleStartEnd(pos_) == 0) {
      const char c = Peek();
      if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (items.empty()) src_.FailAt(pos_, "'", c, "' must follow something to repeat");
        if (repeated) {
          src_.FailAt(pos_, "a repetition may not follow another: group with ( ) first");
        }
        Repeat(items.back());
        repeated = true;
      } else {
        items.push_back(Primary(depth));
        repeated = false;
      }
      SkipSpace();
    }
    return Group(GbnfExpr::Kind::kSequence, at, std::move(items));
  }

  void Repeat(GbnfExpr& item) {
    const size_t at = pos_;
    int64_t min = 0, max = -1;
    switch (text_[pos_++]) {
      case '+':
        min = 1;
        break;
      case '?':
        max = 1;
        break;
      case '{':
        SkipSpace();
        min = Count();
        max = min;
        SkipSpace();
        if (Eat(',')) {
          SkipSpace();
          max = !AtEnd() && IsDigit(Peek()) ? Count() : -1;
          SkipSpace();
        }
        if (!Eat('}')) src_.FailAt(pos_, "expected '}' closing the repetition {m,n}");
        if (max >= 0 && max < min) src_.FailAt(at, "the repetition {m,n} needs m <= n");
        break;
      default:  // '*'
        break;
    }
    GbnfExpr repeat = Make(GbnfExpr::Kind::kRepeat, item.at);
    repeat.min = min;
    repeat.max = max;
    repeat.items.push_back(std::move(item));
    item = std::move(repeat);
  }

  int64_t Count() {
    const size_t at = pos_;
    if (AtEnd() || !IsDigit(Peek())) src_.FailAt(pos_, "expected a number in the repetition {m,n}");
    int64_t value = 0;
    while (!AtEnd() && IsDigit(Peek())) {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > kMaxRepetitions) {
        src_.FailAt(at, "repetition counts above ", kMaxRepetitions, " are not supported");
      }
    }
    return value;
  }

  GbnfExpr Primary(int depth) {
    const size_t at = pos_;
    const char c = Peek();
    if (c == '"' || c == '\'') return Literal(c);
    if (c == '[') return Class();
    if (c == '.') {
      ++pos_;
      GbnfExpr any = Make(GbnfExpr::Kind::kChars, at);
      any.chars = CodepointSet::All();
      return any;
    }
    if (c == '(') {
      if (depth >= kMaxGbnfNesting) {
        src_.FailAt(at, "groups nested deeper than ", kMaxGbnfNesting, " are not supported");
      }
      ++pos_;
      SkipSpace();
      if (!AtEnd() && Peek() == '=')
        src_.FailAt(at, "lookahead assertions (= ...) are not supported");
      GbnfExpr inner = Alternatives(depth + 1);
      if (!Eat(')')) src_.FailAt(at, "'(' without a matching ')'");
      inner.at = at;  // errors about the group point at its '('
      return inner;
    }
    if (IsNameChar(c)) {
      while (!AtEnd() && IsNameChar(Peek())) ++pos_;
      GbnfExpr ref = Make(GbnfExpr::Kind::kRef, at);
      ref.rule = RuleId(text_.substr(at, pos_ - at));
      RuleInfo& rule = rules_[ref.rule];
      if (!rule.defined && rule.first_use == 0) {
        rule.first_use = at;
        rule.used_in = rule_;
      }
      return ref;
    }
    if (c == '<') {
      src_.FailAt(at, "token references <...> are not supported: the grammar is over characters");
    }
    src_.FailAt(at, "unexpected '", text_.substr(at, text::ScanUtf8(text_, at).length),
                "': expected a literal \"...\", a character class [...], '.', a rule name, "
                "'(' or the next rule `name ::=`");
  }

  GbnfExpr Literal(char quote) {
    const size_t at = pos_++;
    GbnfExpr literal = Make(GbnfExpr::Kind::kLiteral, at);
    while (true) {
      if (AtEnd()) src_.FailAt(at, "unterminated literal: no closing ", quote);
      if (Eat(quote)) return literal;
      text::AppendUtf8(Char(), &literal.literal);
    }
  }

  GbnfExpr Class() {
    const size_t at = pos_++;
    const bool negated = Eat('^');
    CodepointSet set;
    while (true) {
      if (AtEnd()) src_.FailAt(at, "unterminated character class: no closing ']'");
      if (Eat(']')) break;
      const size_t range_at = pos_;
      const char32_t first = Char();
      char32_t last = first;
      if (pos_ + 1 < text_.size() && Peek() == '-' && text_[pos_ + 1] != ']') {
        ++pos_;
        last = Char();
        if (last < first) {
          src_.FailAt(range_at, "the range ", text_.substr(range_at, pos_ - range_at),
                      " runs backwards");
        }
      }
      set.Add(first, last);
    }
    GbnfExpr chars = Make(GbnfExpr::Kind::kChars, at);
    chars.chars = negated ? set.Complement() : set;
    if (chars.chars.Empty()) src_.FailAt(at, "the character class matches no character");
    return chars;
  }

  // One character of a literal or a class, escapes decoded.
  char32_t Char() {
    const size_t at = pos_;
    if (Peek() != '\\') {
      const size_t length = text::ScanUtf8(text_, pos_).length;
      pos_ += length;
      return text::DecodeUtf8(text_, at, length);
    }
    ++pos_;
    if (AtEnd()) src_.FailAt(at, "the grammar ends inside an escape");
    const char c = text_[pos_++];
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '\\':
      case '"':
      case '\'':
      case '[':
      case ']':
      case '-':
        return static_cast<unsigned char>(c);
      case 'x':
        return Hex(at, 2);
      case 'u':
        return Hex(at, 4);
      case 'U':
        return Hex(at, 8);
      default:
        --pos_;
        src_.FailAt(at, "unknown escape \\", text_.substr(pos_, text::ScanUtf8(text_, pos_).length),
                    " (known: \\n \\r \\t \\\\ \\\" \\' \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH)");
    }
  }

  char32_t Hex(size_t at, int digits) {
    char32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = AtEnd() ? '\0' : Peek();
      int digit;
      if (IsDigit(c)) {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        src_.FailAt(at, "the escape \\", text_[at + 1], " needs ", digits, " hexadecimal digits");
      }
      value = value * 16 + static_cast<char32_t>(digit);
      ++pos_;
    }
    if (value > kMaxCodepoint) src_.FailAt(at, "the escape is beyond U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF) {
      src_.FailAt(at, "the escape is a surrogate, which is not a character");
    }
    return value;
  }

  const GbnfSource& src_;
  std::string_view text_;
  size_t pos_ = 0;
  std::vector<RuleInfo> rules_;
  std::unordered_map<std::string_view, int32_t> ids_;
  int32_t rule_ = 0;  // the rule being defined
  int32_t expr_count_ = 0;
};

}  // namespace

std::string GbnfSource::Location(size_t offset) const {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text_[i]);
    if (byte == '\n') {
      ++line;
      column = 1;
    } else if ((byte & 0xC0) != 0x80) {
      ++column;
    }
  }
  return StrCat("line ", line, ", column ", column);
}

GbnfGrammar ParseGbnf(const GbnfSource& source) { return GbnfParser(source).Parse(); }

}  // namespace qvl::grammar
