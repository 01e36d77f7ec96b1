#include "grammar/gbnf_grammar.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "grammar/gbnf_checks.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_rules.h"
#include "grammar/grammar_test_util.h"
#include "grammar/pattern_grammar.h"

namespace qvl {
namespace {

using grammar_test::Accepts;

struct GbnfCase {
  const char* name;
  const char* grammar;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

// llama.cpp's example grammars (grammars/*.gbnf) and the syntax around them.
const std::vector<GbnfCase>& GbnfCases() {
  static const std::vector<GbnfCase> cases = {
      {"yes or no",
       R"g(root ::= "yes" | "no")g",
       {"yes", "no"},
       {"", "y", "maybe", "yesno", "Yes"}},
      {"arithmetic",
       R"g(root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*)g",
       {"1+2=3\n", "(a +b_2)*c = x\n1=1\n", "x=( 4 )\n"},
       {"1+=3\n", "1+2=3", "A=1\n", "(1=1\n"}},
      {"list",
       R"g(root ::= ("- " item)+
item ::= [^\n]+ "\n")g",
       {"- one\n", "- one\n- two, three\n", "- caf\xC3\xA9\n"},
       {"", "- \n", "one\n", "- one"}},
      {"chess",
       R"g(# `root` specifies the pattern for the overall output
root ::= (
    # it must start with the characters "1. " followed by a move pair
    "1. " move " " move "\n"

    # it's followed by one or more subsequent moves, numbered with one or two digits
    ([1-9] [0-9]? ". " move " " move "\n")+
)
move ::= (pawn | nonpawn | castle) [+#]?
pawn ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBKQR])?
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]
castle ::= "O-O" "-O"?)g",
       {"1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n10. O-O-O Qxd8#\n"},
       {"1. e4 e5\n", "1. e9 e5\n2. a3 a6\n", "1. e4 e5\n0. a3 a6\n"}},
      {"json-ish",
       R"g(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4})
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20})g",
       {R"g({})g", R"g({"a": [1, -2.5e3, true, null], "b": {"c": "\u00e9\n"}})g",
        "{ \"k\" :\n  \"v\" }"},
       {R"g([])g", R"g({"a" 1})g", R"g({"a": 01x})g", R"g({"a": "\x"})g", "{\"a\": \"\x01\"}"}},
      {"unicode class",
       "root ::= [一-鿿]+",
       {"中文", "\xE4\xB8\x80\xE9\xBF\xBF"},
       {"", "abc", "中a", "\xE4\xB8\x80\xEA\x80\x80"}},
      {"a class across UTF-8 lengths",
       R"g(root ::= [\x7E-\u0101] [\u07FF-\u0800] [\uFFFF-\U00010000])g",
       {"~\xDF\xBF\xEF\xBF\xBF", "\x7F\xE0\xA0\x80\xF0\x90\x80\x80",
        "\xC4\x81\xDF\xBF\xEF\xBF\xBF"},
       {"}\xDF\xBF\xEF\xBF\xBF", "\xC4\x82\xDF\xBF\xEF\xBF\xBF", "~\xDF\xBE\xEF\xBF\xBF",
        "~\xDF\xBF\xF0\x90\x80\x81"}},
      {"any character and negation",
       R"g(root ::= . [^a-c\n] .)g",
       {"xdy", "\xF0\x9F\x98\x80\xC3\xA9\n", "\n\t\n"},
       {"xay", "x\ny", "xy", "\xF0\x9F\x98xy"}},
      {"repetition counts",
       R"g(root ::= "a"{2,3} "b"{2} "c"{1,} ("d" "e"){0,1})g",
       {"aabbc", "aaabbccc", "aabbcde"},
       {"abbc", "aaaabbc", "aabc", "aabb", "aabbcd", "aabbcdede"}},
      {"escapes",
       R"g(root ::= "\x41\u00e9\U0001F600\t\"\\\'" [\]\[\-] 'it\'s')g",
       {"A\xC3\xA9\xF0\x9F\x98\x80\t\"\\']it's", "A\xC3\xA9\xF0\x9F\x98\x80\t\"\\'-it's"},
       {"A\xC3\xA9\xF0\x9F\x98\x80\t\"\\'xit's"}},
      {"rules spanning lines, comments, single quotes",
       R"g(
# greets someone
root ::= greeting   # a comment after an item
  " " name
greeting ::= 'hi'
  | 'hello'
name ::= (
  "bob" |   # a comment inside a group
  "alice"
))g",
       {"hi bob", "hello alice"},
       {"hi", "hey bob", "hello  alice"}},
      {"an empty alternative and right recursion",
       R"g(root ::= "a" ws "b"
ws ::= | " " ws
under_score-name ::= "unused")g",
       {"ab", "a   b"},
       {"a\tb", "a b "}},
      {"an empty literal and repetitions of what may be empty",
       R"g(root ::= "" ("x"?)* ("y"?){2,3} "z")g",
       {"z", "xxz", "yyyz", "xyz"},
       {"yyyyz", "zz"}},
      {"spaces before a repetition and inside braces",
       R"g(root ::= "a" * "b" { 1 , 2 })g",
       {"b", "aabb"},
       {"abbb", "a"}},
  };
  return cases;
}

TEST(GbnfGrammarTest, AcceptsExactlyTheLanguage) {
  for (const GbnfCase& c : GbnfCases()) {
    SCOPED_TRACE(c.name);
    const std::shared_ptr<const Grammar> grammar = CompileGbnf(c.grammar, "grammar");
    for (const std::string& text : c.accepted) EXPECT_TRUE(Accepts(grammar, text)) << text;
    for (const std::string& text : c.rejected) EXPECT_FALSE(Accepts(grammar, text)) << text;
  }
}

// Every generation the token masks allow is a sentence of the grammar.
TEST(GbnfGrammarTest, GenerationsUnderTheMaskAreAccepted) {
  std::mt19937 rng(11);
  for (const GbnfCase& c : GbnfCases()) {
    SCOPED_TRACE(c.name);
    const std::shared_ptr<const Grammar> grammar = CompileGbnf(c.grammar, "grammar");
    for (int i = 0; i < 3; ++i) {
      const grammar_test::Generation generation = grammar_test::RandomGeneration(grammar, 40, &rng);
      if (generation.ended_with_eos) {
        EXPECT_TRUE(Accepts(grammar, generation.text)) << generation.text;
      }
    }
  }
}

struct ErrorCase {
  std::string grammar;
  std::string message;  // the whole message after "grammar: "
};

TEST(GbnfGrammarTest, RefusesWithTheLineAndColumn) {
  const std::vector<ErrorCase> cases = {
      {"", "the grammar is empty: it needs at least the rule `root ::= ...`"},
      {"  # only a comment\n", "the grammar is empty: it needs at least the rule `root ::= ...`"},
      {"start ::= \"a\"", "the grammar has no rule `root` (the rule the whole output must match)"},
      {"root ::= greeting\ngreeting ::= \"hi\" nmae\nname ::= \"x\"",
       "line 2, column 19: undefined rule `nmae` referenced in rule `greeting`"},
      {"root ::= \"a\"\nroot ::= \"b\"",
       "line 2, column 1: rule `root` is defined twice (first at line 1, column 1)"},
      {"root \"a\"", "line 1, column 6: expected '::=' after the rule name `root`"},
      {"::= \"a\"",
       "line 1, column 1: expected a rule name (letters, digits, '-' and '_') starting a rule"},
      {"root ::= \"abc", "line 1, column 10: unterminated literal: no closing \""},
      {"root ::= 'abc\"", "line 1, column 10: unterminated literal: no closing '"},
      {"root ::= [a-z", "line 1, column 10: unterminated character class: no closing ']'"},
      {"root ::= \"é\" [z-a]", "line 1, column 15: the range z-a runs backwards"},
      {"root ::= []", "line 1, column 10: the character class matches no character"},
      {"root ::= \"\\q\"",
       "line 1, column 11: unknown escape \\q (known: \\n \\r \\t \\\\ \\\" \\' \\[ \\] \\- "
       "\\xHH \\uHHHH \\UHHHHHHHH)"},
      {"root ::= \"\\u12\"", "line 1, column 11: the escape \\u needs 4 hexadecimal digits"},
      {"root ::= \"\\uD800\"",
       "line 1, column 11: the escape is a surrogate, which is not a character"},
      {"root ::= [\\U00110000]", "line 1, column 11: the escape is beyond U+10FFFF"},
      {"root ::= (\"a\" | \"b\"", "line 1, column 10: '(' without a matching ')'"},
      {"root ::= \"a\")", "line 1, column 13: ')' without a matching '('"},
      {"root ::= * \"a\"", "line 1, column 10: '*' must follow something to repeat"},
      {"root ::= \"a\"+?",
       "line 1, column 14: a repetition may not follow another: group with ( ) first"},
      {"root ::= \"a\"{3,2}", "line 1, column 13: the repetition {m,n} needs m <= n"},
      {"root ::= \"a\"{,2}", "line 1, column 14: expected a number in the repetition {m,n}"},
      {"root ::= \"a\"{2", "line 1, column 15: expected '}' closing the repetition {m,n}"},
      {"root ::= \"a\"{10001}", StrCat("line 1, column 14: repetition counts above ",
                                       grammar::kMaxRepetitions, " are not supported")},
      {"root ::= <think>",
       "line 1, column 10: token references <...> are not supported: the grammar is over "
       "characters"},
      {"root ::= \"a\" (= \"b\")",
       "line 1, column 14: lookahead assertions (= ...) are not supported"},
      {"root ::= \"a\" } \"b\"",
       "line 1, column 14: unexpected '}': expected a literal \"...\", a character class "
       "[...], '.', a rule name, '(' or the next rule `name ::=`"},
      {"root ::= \"a\xFF\"", "line 1, column 12: the grammar is not valid UTF-8"},
      {"root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]",
       "line 2, column 10: rule `expr` is left-recursive (expr -> expr before any character): "
       "write the repetition with * or + instead, e.g. `list ::= item (\",\" item)*`"},
      {"root ::= a\na ::= \"x\"? b\nb ::= (\"\" c)*\nc ::= a \"y\"",
       "line 4, column 7: rule `a` is left-recursive (a -> b -> c -> a before any character): "
       "write the repetition with * or + instead, e.g. `list ::= item (\",\" item)*`"},
      {"root ::= \"(\" inner\ninner ::= \"x\" inner | \"(\" inner",
       "line 1, column 1: rule `root` can never finish: each of its alternatives leads into a "
       "recursion with no way out"},
      {"root ::= \"a\"\nloop ::= \"x\" loop",
       "line 2, column 1: rule `loop` can never finish: each of its alternatives leads into a "
       "recursion with no way out"},
      {"root ::= ((\"a\"{10000}){10000}){10000}",
       "the grammar is too large to enforce once its repetitions are expanded: lower the "
       "repetition counts {m,n}"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.grammar);
    try {
      CompileGbnf(c.grammar, "grammar");
      ADD_FAILURE() << "compiled";
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(e.field(), "grammar");
      EXPECT_EQ(std::string(e.what()), "grammar: " + c.message);
    }
  }
}

TEST(GbnfGrammarTest, RefusesGroupsNestedTooDeep) {
  const int depth = grammar::kMaxGbnfNesting + 1;
  const std::string text =
      "root ::= " + std::string(depth, '(') + "\"a\"" + std::string(depth, ')');
  try {
    CompileGbnf(text, "structured_outputs.grammar");
    ADD_FAILURE() << "compiled";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "structured_outputs.grammar");
    EXPECT_EQ(
        std::string(e.what()),
        StrCat("structured_outputs.grammar: line 1, column ", 10 + grammar::kMaxGbnfNesting,
               ": groups nested deeper than ", grammar::kMaxGbnfNesting, " are not supported"));
  }
  const std::string deepest =
      "root ::= " + std::string(depth - 1, '(') + "\"a\"" + std::string(depth - 1, ')');
  EXPECT_TRUE(Accepts(CompileGbnf(deepest, "grammar"), "a"));
}

// The matcher expands every rule and repetition it may enter before the next character,
// once per way of reaching it, on every step: past kMaxLeadingParts a grammar is
// refused, where it would take seconds per token (or the stack) to enforce.
TEST(GbnfGrammarTest, BoundsWhatMayBeEnteredBeforeACharacter) {
  const std::string message =
      StrCat("more than ", grammar::kMaxLeadingParts,
             " rules and repetitions may be entered here before the next character, too many to "
             "enforce: make the repeated part non-empty (\"a\"{0,2000}, not (\"a\"?){0,2000}) or "
             "shorten the chain of rules that start with rules");
  std::string chain = "root ::= r0\n";
  constexpr int kRules = 20000;
  for (int i = 0; i < kRules; ++i)
    chain += StrCat("r", i, " ::= r", i + 1, " | \"", i % 10, "\"\n");
  chain += StrCat("r", kRules, " ::= \"end\"\n");
  const std::vector<ErrorCase> cases = {
      // Each copy of ("a"?) is three parts: the copy, the ?, the literal.
      {R"g(root ::= ("a"?){0,2000})g", "line 1, column 10: " + message},
      {R"g(root ::= "x" (("a"?){0,30}){0,30})g", "line 1, column 14: " + message},
      // r19000 is the first rule of the chain with more than 1000 rules after it.
      {chain, "line 19002, column 12: " + message},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.grammar.substr(0, 40));
    try {
      CompileGbnf(c.grammar, "grammar");
      ADD_FAILURE() << "compiled";
    } catch (const FieldError& e) {
      EXPECT_EQ(std::string(e.what()), "grammar: " + c.message);
    }
  }

  const std::shared_ptr<const Grammar> optional_copies =
      CompileGbnf(R"g(root ::= ("a"?){0,300} "b")g", "grammar");
  EXPECT_TRUE(Accepts(optional_copies, std::string(300, 'a') + "b"));
  EXPECT_FALSE(Accepts(optional_copies, std::string(301, 'a') + "b"));
  // Alternatives are entered side by side, not one inside another: a long list is fine.
  std::string words = "root ::= \"w0\"";
  for (int i = 1; i < 5000; ++i) words += StrCat(" | \"w", i, "\"");
  const std::shared_ptr<const Grammar> choice = CompileGbnf(words, "grammar");
  EXPECT_TRUE(Accepts(choice, "w4999"));
  EXPECT_FALSE(Accepts(choice, "w5000"));
}

}  // namespace
}  // namespace qvl
