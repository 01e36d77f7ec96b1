#include "grammar/pattern_grammar.h"

#include <vector>

#include "base/field_error.h"
#include "text/utf8.h"

namespace qvl::grammar {
namespace {

// How the matched text is written: inside a JSON string (escaped where JSON requires,
// searched for unless anchored) or as the whole text, raw.
enum class PatternForm { kJsonString, kWholeText };

class PatternParser {
 public:
  PatternParser(JsonRules& rules, std::string_view pattern, const std::string& path,
                PatternForm form)
      : rules_(rules), b_(rules.builder()), path_(path), form_(form) {
    size_t pos = 0;
    while (pos < pattern.size()) {
      const text::Utf8Sequence seq = text::ScanUtf8(pattern, pos);
      if (seq.status != text::Utf8Status::kValid) Fail("the pattern is not valid UTF-8");
      chars_.push_back(text::DecodeUtf8(pattern, pos, seq.length));
      pos += seq.length;
    }
  }

  Sequence Parse() {
    const int32_t first_rule = b_.RuleCount();
    std::vector<Sequence> alternatives;
    do {
      const bool anchored_start = Eat('^');
      Sequence body = Concatenation(/*top_level=*/true);
      const bool anchored_end = Eat('$');
      if (!AtEnd() && Peek() != '|') Fail("'$' is only supported at the end of the pattern");
      if (form_ == PatternForm::kWholeText) {
        alternatives.push_back(std::move(body));
        continue;
      }
      const Sequence any = b_.Star(Char(CodepointSet::All()));
      alternatives.push_back(
          Concat({anchored_start ? Sequence{} : any, body, anchored_end ? Sequence{} : any}));
    } while (Eat('|'));
    if (!AtEnd()) Fail("unbalanced ')'");
    Sequence matched = b_.Bounded(first_rule, b_.Alt(std::move(alternatives)), path_);
    if (form_ == PatternForm::kWholeText) return matched;
    return Concat({b_.Literal("\""), matched, b_.Literal("\"")});
  }

 private:
  // One character of `set` as the form writes it.
  Sequence Char(const CodepointSet& set) {
    return form_ == PatternForm::kJsonString ? rules_.CharIn(set) : rules_.Utf8(set);
  }
  [[noreturn]] void Fail(std::string_view what) {
    FailField(ErrorCode::kInvalidArgument, path_, what);
  }
  bool AtEnd() const { return pos_ >= chars_.size(); }
  char32_t Peek() const { return chars_[pos_]; }
  bool Eat(char32_t c) {
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }
  char32_t Next() {
    if (AtEnd()) Fail("the pattern ends in the middle of an expression");
    return chars_[pos_++];
  }

  Sequence Alternation() {
    std::vector<Sequence> alternatives;
    do {
      alternatives.push_back(Concatenation(/*top_level=*/false));
    } while (Eat('|'));
    return b_.Alt(std::move(alternatives));
  }

  Sequence Concatenation(bool top_level) {
    Sequence out;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      if (Peek() == '$' && top_level && (pos_ + 1 == chars_.size() || chars_[pos_ + 1] == '|')) {
        break;
      }
      Sequence atom = Atom();
      atom = Quantified(std::move(atom));
      out.insert(out.end(), atom.begin(), atom.end());
    }
    return out;
  }

  int64_t Number() {
    int64_t value = 0;
    bool any = false;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      value = value * 10 + (Next() - '0');
      if (value > kMaxRepetitions) {
        Fail(StrCat("repetition counts above ", kMaxRepetitions, " are not supported"));
      }
      any = true;
    }
    if (!any) Fail("'{' must start a quantifier {m}, {m,} or {m,n}");
    return value;
  }

  Sequence Quantified(Sequence atom) {
    if (AtEnd()) return atom;
    int64_t min, max;
    switch (Peek()) {
      case '?':
        min = 0, max = 1;
        break;
      case '*':
        min = 0, max = -1;
        break;
      case '+':
        min = 1, max = -1;
        break;
      case '{':
        ++pos_;
        min = Number();
        max = min;
        if (Eat(',')) max = !AtEnd() && Peek() == '}' ? -1 : Number();
        if (AtEnd() || Peek() != '}') Fail("'{' must start a quantifier {m}, {m,} or {m,n}");
        if (max >= 0 && max < min) Fail("a quantifier {m,n} needs m <= n");
        break;
      default:
        return atom;
    }
    ++pos_;
    Eat('?');  // lazy: the same strings match
    if (!AtEnd() && (Peek() == '?' || Peek() == '*' || Peek() == '+' || Peek() == '{')) {
      Fail("a quantifier may not follow another");
    }
    return b_.Repeat(std::move(atom), min, max);
  }

  Sequence Atom() {
    const char32_t c = Next();
    switch (c) {
      case '(': {
        if (Eat('?')) {
          if (!Eat(':')) Fail("lookaround, named groups and flags are not supported");
        }
        Sequence inner = Alternation();
        if (!Eat(')')) Fail("unbalanced '('");
        return inner;
      }
      case '[':
        return Char(Class());
      case '.': {
        CodepointSet line_ends;
        line_ends.Add('\n', '\n');
        line_ends.Add('\r', '\r');
        line_ends.Add(0x2028, 0x2029);
        return Char(line_ends.Complement());
      }
      case '\\':
        return Char(Escape(/*in_class=*/false));
      case '^':
        Fail("'^' is only supported at the start of the pattern");
      case '$':
        Fail("'$' is only supported at the end of the pattern");
      case '*':
      case '+':
      case '?':
      case '{':
        Fail("a quantifier must follow something to repeat");
      default: {
        CodepointSet set;
        set.Add(c, c);
        return Char(set);
      }
    }
  }

  CodepointSet Class() {
    const bool negated = Eat('^');
    CodepointSet set;
    while (true) {
      if (AtEnd()) Fail("unbalanced '['");
      if (Eat(']')) break;
      char32_t first = Next();
      CodepointSet item;
      if (first == '\\') {
        item = Escape(/*in_class=*/true);
        if (item.ranges().size() != 1 || item.ranges()[0].first != item.ranges()[0].second) {
          set.Add(item);
          continue;
        }
        first = item.ranges()[0].first;
      }
      char32_t last = first;
      if (pos_ + 1 < chars_.size() && Peek() == '-' && chars_[pos_ + 1] != ']') {
        ++pos_;
        last = Next();
        if (last == '\\') {
          const CodepointSet end = Escape(/*in_class=*/true);
          if (end.ranges().size() != 1 || end.ranges()[0].first != end.ranges()[0].second) {
            Fail("a class range must end in a single character");
          }
          last = end.ranges()[0].first;
        }
        if (last < first) Fail("a class range must not run backwards");
      }
      set.Add(first, last);
    }
    return negated ? set.Complement() : set;
  }

  char32_t Hex(int digits) {
    char32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char32_t c = Next();
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        Fail("\\x and \\u need hexadecimal digits");
      }
      value = value * 16 + digit;
    }
    return value;
  }

  CodepointSet Escape(bool in_class) {
    const char32_t c = Next();
    CodepointSet set;
    const auto single = [&](char32_t value) {
      set.Add(value, value);
      return set;
    };
    switch (c) {
      case 'd':
      case 'D':
        set.Add('0', '9');
        return c == 'd' ? set : set.Complement();
      case 'w':
      case 'W':
        set.Add('0', '9');
        set.Add('A', 'Z');
        set.Add('a', 'z');
        set.Add('_', '_');
        return c == 'w' ? set : set.Complement();
      case 's':
      case 'S':
        // ECMA-262 WhiteSpace and LineTerminator.
        set.Add('\t', '\r');
        set.Add(' ', ' ');
        set.Add(0xA0, 0xA0);
        set.Add(0x1680, 0x1680);
        set.Add(0x2000, 0x200A);
        set.Add(0x2028, 0x2029);
        set.Add(0x202F, 0x202F);
        set.Add(0x205F, 0x205F);
        set.Add(0x3000, 0x3000);
        set.Add(0xFEFF, 0xFEFF);
        return c == 's' ? set : set.Complement();
      case 't':
        return single('\t');
      case 'n':
        return single('\n');
      case 'r':
        return single('\r');
      case 'f':
        return single('\f');
      case 'v':
        return single('\v');
      case '0':
        return single(0);
      case 'x':
        return single(Hex(2));
      case 'u': {
        const char32_t value = Hex(4);
        if (value >= 0xD800 && value <= 0xDFFF) Fail("\\u escapes of surrogates are not supported");
        return single(value);
      }
      case 'b':
        if (in_class) return single('\b');
        Fail("word boundaries (\\b) are not supported");
      default:
        if (c < 0x80 && std::isalnum(static_cast<int>(c))) {
          Fail(StrCat("the escape \\", static_cast<char>(c), " is not supported"));
        }
        return single(c);
    }
  }

  JsonRules& rules_;
  GrammarBuilder& b_;
  const std::string& path_;
  const PatternForm form_;
  std::vector<char32_t> chars_;
  size_t pos_ = 0;
};

}  // namespace

Sequence PatternString(JsonRules& rules, std::string_view pattern, const std::string& path) {
  return PatternParser(rules, pattern, path, PatternForm::kJsonString).Parse();
}

Sequence PatternText(JsonRules& rules, std::string_view pattern, const std::string& path) {
  return PatternParser(rules, pattern, path, PatternForm::kWholeText).Parse();
}

}  // namespace qvl::grammar
