#include <gtest/gtest.h>

#include <random>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_test_util.h"
#include "grammar/schema_validator_for_test.h"

namespace qvl {
namespace {

using grammar_test::Accepts;
using Json = nlohmann::ordered_json;

struct SchemaCase {
  const char* schema;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

// Every supported keyword, with texts on both sides of its edge.
const std::vector<SchemaCase>& SchemaCases() {
  static const std::vector<SchemaCase> cases = {
      {R"({})",
       {"1", "\"a\"", "[1, {\"a\": null}]", "{}", "true", "-0.5e3"},
       {"", "tru", "[1,]", "01"}},
      {R"(true)", {"null", "{\"a\": [1, 2]}"}, {"{\"a\" 1}"}},
      {R"({"type": "string"})",
       {R"("")", R"("hello")", R"("a\"b\\c\n\u00e9")", "\"caf\xC3\xA9\"", "\"\xF0\x9F\x98\x80\""},
       {R"(hello)", R"("a)", "\"\x01\"", R"("\x")", R"("\ud800")", "\"\xC3\"", "\"\xED\xA0\x80\""}},
      {R"({"type": "integer"})",
       {"0", "-7", "1234567890123456"},
       {"1.5", "01", "+1", "1e3", "12345678901234567"}},
      {R"({"type": "number"})",
       {"0", "-7.25", "1e10", "2.5E-3", "0.0"},
       {".5", "1.", "--1", "1e", "1e100"}},
      {R"({"type": "boolean"})", {"true", "false"}, {"1", "True"}},
      {R"({"type": "null"})", {"null"}, {"nul", "\"null\""}},
      {R"({"type": ["string", "null"]})", {"null", R"("x")"}, {"1"}},
      {R"({"type": "string", "nullable": true})", {"null", R"("x")"}, {"1"}},
      {R"({"type": "string", "minLength": 2, "maxLength": 3})",
       {R"("ab")", R"("abc")", "\"\xC3\xA9\xC3\xA9\"", R"("\n\t")"},
       {R"("a")", R"("abcd")", "\"\xC3\xA9\""}},
      {R"({"type": "string", "pattern": "^[a-z]{2}-[0-9]+$"})",
       {R"("ab-1")", R"("zz-0042")"},
       {R"("ab-")", R"("Ab-1")", R"("ab-1x")"}},
      {R"({"type": "string", "pattern": "cat|dog"})",
       {R"("cat")", R"("a dog!")", R"("concatenate")"},
       {R"("cow")", R"("")"}},
      {R"({"type": "string", "pattern": "^(\\d{3}\\.)?[^\\s\"]+\\w$"})",
       {R"("123.ab")", R"("x_")"},
       {R"("ab\"")", R"("a b")", R"("a")"}},
      {R"({"type": "string", "pattern": "^a.c$"})",
       {R"("abc")",
        "\"a\xC3\xA9"
        "c\"",
        R"("a\"c")"},
       {R"("a\nc")", R"("ac")"}},
      // Quantified groups that may match nothing.
      {R"({"type": "string", "pattern": "^(a?)*(b*)+c$"})",
       {R"("c")", R"("aabbc")", R"("abbc")"},
       {R"("ca")", R"("")", R"("bac")"}},
      {R"({"type": "string", "format": "date"})",
       {R"("2024-02-29")", R"("1999-12-31")"},
       {R"("2024-02-30")", R"("2024-13-01")", R"("2024-04-31")", R"("24-01-01")"}},
      {R"({"type": "string", "format": "time"})",
       {R"("23:59:59Z")", R"("08:00:00.5+02:00")"},
       {R"("24:00:00Z")", R"("08:00:00")"}},
      {R"({"type": "string", "format": "date-time"})",
       {R"("2024-05-01T12:30:00Z")"},
       {R"("2024-05-01 12:30:00Z")"}},
      {R"({"type": "string", "format": "uuid"})",
       {R"("123e4567-e89b-12d3-a456-426614174000")"},
       {R"("123e4567e89b12d3a456426614174000")"}},
      {R"({"type": "string", "format": "email"})",
       {R"("a.b@example.com")"},
       {R"("a@b")", R"("a..b@example.com")", R"("@example.com")"}},
      {R"({"type": "string", "format": "uri"})",
       {R"("https://example.com/a?b=1#c")"},
       {R"("example.com")", R"("http://a b")"}},
      {R"({"type": "string", "format": "ipv4"})",
       {R"("192.168.0.1")"},
       {R"("256.1.1.1")", R"("1.2.3")"}},
      {R"({"type": "integer", "minimum": -5, "maximum": 120})",
       {"-5", "0", "9", "99", "100", "120", "-1"},
       {"-6", "121", "200", "-10", "1000"}},
      {R"({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})",
       {"1", "9"},
       {"0", "10", "-1"}},
      {R"({"type": "integer", "minimum": 1000})",
       {"1000", "99999", "123456789"},
       {"999", "-1000", "0"}},
      {R"({"type": "integer", "maximum": -3})", {"-3", "-40"}, {"-2", "0", "5"}},
      {R"({"type": "number", "minimum": 0, "maximum": 1})",
       {"0", "0.5", "1", "1.000", "0.999"},
       {"-0.5", "1.01", "2", "1e0"}},
      {R"({"type": "number", "exclusiveMinimum": 0})",
       {"0.001", "5", "12.5"},
       {"0", "0.000", "-1"}},
      {R"({"type": "number", "minimum": -2, "exclusiveMaximum": 3})",
       {"-2", "-1.5", "2.999", "0"},
       {"-2.5", "3", "3.0", "-3"}},
      {R"({"enum": ["red", 3, null, {"a": [1]}]})",
       {R"("red")", "3", "null", R"({"a":[1]})"},
       {R"("blue")", "4", R"({"a": [1]})"}},
      {R"({"const": "fixed"})", {R"("fixed")"}, {R"("other")"}},
      {R"({"type": "string", "enum": ["a", 1]})", {R"("a")"}, {"1"}},
      {R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})",
       {"5", R"("x")"},
       {R"("xy")", "true"}},
      {R"({"oneOf": [{"type": "boolean"}, {"type": "null"}]})", {"true", "null"}, {"0"}},
      {R"({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "string"}}, "required": ["b"]}]})",
       {R"({"a": 1, "b": "x"})"},
       {R"({"a": 1})", R"({"b": "x", "a": 1})"}},
      {R"({"allOf": [{"type": "number"}, {"type": "integer", "minimum": 2}]})",
       {"2", "7"},
       {"1", "2.5"}},
      {R"({"type": "array", "items": {"type": "integer"}})",
       {"[]", "[1]", "[1, 2,3]", "[ 1 ,\n  2 ]"},
       {"[1,]", "[\"a\"]", "[1 2]"}},
      {R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})",
       {"[1, 2]", "[1, 2, 3]"},
       {"[]", "[1]", "[1, 2, 3, 4]"}},
      {R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false})",
       {"[]", R"(["a"])", R"(["a", 1])"},
       {R"([1])", R"(["a", 1, 2])"}},
      {R"({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "boolean"}, "minItems": 2})",
       {R"(["a", true])", R"(["a", true, false])"},
       {R"(["a"])", R"(["a", 1])"}},
      {R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
           "required": ["name"], "additionalProperties": false})",
       {R"({"name": "x"})", R"({"name": "x", "age": 3})", R"({ "name" : "x" ,"age":3 })"},
       {R"({})", R"({"age": 3})", R"({"name": "x", "extra": 1})", R"({"age": 3, "name": "x"})",
        R"({"name": "x",})"}},
      {R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
           "c": {"type": "integer"}}, "additionalProperties": false})",
       {"{}", R"({"b": 2})", R"({"a": 1, "c": 3})", R"({"a": 1, "b": 2, "c": 3})"},
       {R"({"c": 3, "a": 1})", R"({, "a": 1})", R"({"a": 1 "b": 2})"}},
      {R"({"type": "object", "properties": {"a": {"type": "integer"}}})",
       {R"({"a": 1, "zz": [true]})", R"({"other": "x"})"},
       {R"({"a": "x"})", R"({"a": 1, "a": 2})"}},
      {R"({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["b"]})",
       {R"({"b": 1})", R"({"a": 1, "b": [true]})"},
       {R"({"a": 1})", "{}"}},
      {R"({"type": "object", "additionalProperties": {"type": "integer"}})",
       {R"({})", R"({"x": 1, "y": 2})"},
       {R"({"x": "1"})"}},
      {R"({"type": "object", "required": ["id"], "additionalProperties": false, "properties": {"id": {"const": 7}}})",
       {R"({"id": 7})"},
       {R"({"id": 8})", "{}"}},
      {R"({"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
           "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
           "required": ["value", "next"], "additionalProperties": false}},
          "$ref": "#/$defs/node"})",
       {R"({"value": 1, "next": null})", R"({"value": 1, "next": {"value": 2, "next": null}})"},
       {R"({"value": 1})", R"({"value": 1, "next": {"value": 2}})"}},
      {R"({"definitions": {"id": {"type": "integer", "minimum": 1}},
           "type": "array", "items": {"$ref": "#/definitions/id"}})",
       {"[1, 2]"},
       {"[0]"}},
      {R"({"title": "T", "description": "d", "examples": [1], "default": 1, "$schema": "x",
           "$comment": "c", "deprecated": false, "readOnly": true, "type": "integer"})",
       {"1"},
       {"\"1\""}},
  };
  return cases;
}

TEST(SchemaCompilerTest, AcceptsAndRejectsTextsForEveryKeyword) {
  for (const SchemaCase& c : SchemaCases()) {
    SCOPED_TRACE(c.schema);
    const std::shared_ptr<const Grammar> grammar = CompileJsonSchema(Json::parse(c.schema));
    for (const std::string& text : c.accepted) EXPECT_TRUE(Accepts(grammar, text)) << text;
    for (const std::string& text : c.rejected) EXPECT_FALSE(Accepts(grammar, text)) << text;
  }
}

TEST(SchemaCompilerTest, ASelfReferenceInAnAlternativeAddsNothing) {
  // a = a or null (validators loop on it, so it is not among the random walks).
  const std::shared_ptr<const Grammar> grammar = CompileJsonSchema(Json::parse(
      R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}, "$ref": "#/$defs/a"})"));
  EXPECT_TRUE(Accepts(grammar, "null"));
  EXPECT_FALSE(Accepts(grammar, "1"));
}

TEST(SchemaCompilerTest, KeepsThePropertyOrderOfAnOrderedSchema) {
  const char* schema =
      R"({"type": "object", "properties": {"z": {"type": "integer"}, "a": {"type": "integer"}},
                          "required": ["z", "a"], "additionalProperties": false})";
  EXPECT_TRUE(Accepts(CompileJsonSchema(Json::parse(schema)), R"({"z": 1, "a": 2})"));
  EXPECT_FALSE(Accepts(CompileJsonSchema(Json::parse(schema)), R"({"a": 2, "z": 1})"));
  // nlohmann::json sorts keys: the order is alphabetical then.
  EXPECT_TRUE(Accepts(CompileJsonSchema(nlohmann::json::parse(schema)), R"({"a": 2, "z": 1})"));
}

TEST(SchemaCompilerTest, JsonObjectGrammarAcceptsOnlyObjects) {
  const std::shared_ptr<const Grammar> grammar = JsonObjectGrammar();
  EXPECT_TRUE(Accepts(grammar, R"({"a": [1, {"b": null}], "c": "\u00e9"})"));
  EXPECT_TRUE(Accepts(grammar, "{}"));
  EXPECT_FALSE(Accepts(grammar, "[]"));
  EXPECT_FALSE(Accepts(grammar, "\"x\""));
  EXPECT_FALSE(Accepts(grammar, " {}"));
  EXPECT_EQ(grammar, JsonObjectGrammar());
}

TEST(SchemaCompilerTest, WhitespaceIsBounded) {
  const std::shared_ptr<const Grammar> grammar = JsonObjectGrammar();
  EXPECT_TRUE(Accepts(grammar, "{\n" + std::string(20, ' ') + "\"a\": 1}"));
  EXPECT_FALSE(Accepts(grammar, "{\n" + std::string(21, ' ') + "\"a\": 1}"));
  EXPECT_FALSE(Accepts(grammar, "{  \"a\": 1}"));
  EXPECT_FALSE(Accepts(grammar, "{\n\n\"a\": 1}"));
}

// Users' patterns compile; a pattern that would have the matcher enter more than
// kMaxLeadingParts before a character is refused (each copy of a group that may match
// nothing is its rule plus two parts per optional letter: 17 here, and 1 for the z).
TEST(SchemaCompilerTest, ARegexIsBoundedInWhatItEntersBeforeACharacter) {
  const char* const usual[] = {
      R"(^\d{4}-\d{2}-\d{2}$)",
      R"(^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$)",
      R"(^\+?[0-9]{1,3}[ -]?\(?[0-9]{3}\)?[ -]?[0-9]{3}[ -]?[0-9]{4}$)",
      "^[A-Z]{2}[0-9]{6}$",
      R"((\d{1,3}\.){3}\d{1,3})",
      "[a-z]{1,64}",
      "((a*)*)*c",
      "(a?b?c?d?e?f?g?h?){58}z",
  };
  for (const char* pattern : usual) {
    SCOPED_TRACE(pattern);
    EXPECT_NO_THROW(CompileRegex(pattern));
    EXPECT_NO_THROW(CompileJsonSchema(Json{{"type", "string"}, {"pattern", pattern}}));
  }
  EXPECT_TRUE(Accepts(CompileRegex("(a?b?c?d?e?f?g?h?){58}z"), "abcabhz"));
  const char* const costly[] = {
      "(a?b?c?d?e?f?g?h?){59}z", "(a?b?c?d?e?f?g?h?){5000}z",
      "(a?){10000}(b?){10000}c", "(((a?){20}){20}){20}c",
      "x|(y(a?){600})",
  };
  for (const char* pattern : costly) {
    SCOPED_TRACE(pattern);
    try {
      CompileRegex(pattern);
      ADD_FAILURE() << "compiled";
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "");
      EXPECT_STREQ(e.what(),
                   "more than 1000 rules and repetitions may be entered before the next "
                   "character, too many to enforce: make each repeated group match at least one "
                   "character ((ab?){0,2000}, not (a?b?){0,2000}) or lower its count");
    }
  }
}

struct RefusedCase {
  const char* schema;
  const char* path;
  const char* message;
};

TEST(SchemaCompilerTest, RefusesWhatItCannotHonourNamingThePath) {
  const RefusedCase cases[] = {
      {R"({"type": "string", "foo": 1})", "foo", "the keyword \"foo\" is not supported"},
      {R"({"type": "integer", "multipleOf": 3})", "multipleOf", "not supported"},
      {R"({"not": {"type": "string"}})", "not", "not supported"},
      {R"({"type": "object", "patternProperties": {"a": {}}})", "patternProperties",
       "not supported"},
      {R"({"type": "object", "minProperties": 1})", "minProperties", "not supported"},
      {R"({"type": "array", "uniqueItems": true})", "uniqueItems", "not supported"},
      {R"({"if": {}, "then": {}})", "if", "not supported"},
      {R"j({"type": "object", "properties": {"address": {"type": "string", "pattern": "(?=a)"}}})j",
       "properties.address.pattern", "lookaround"},
      {R"({"items": {"anyOf": [{"type": "string"}, {"type": "string", "minLength": -1}]}})",
       "items.anyOf[1].minLength", "non-negative integer"},
      {R"({"type": "string", "pattern": "(a)\\1"})", "pattern", "escape \\1"},
      {R"({"type": "string", "pattern": "a\\b"})", "pattern", "word boundaries"},
      {R"({"type": "string", "pattern": "a^b"})", "pattern", "'^'"},
      {R"({"type": "string", "pattern": "\\p{L}"})", "pattern", "escape \\p"},
      {R"({"properties": {"code": {"type": "string", "pattern": "^(a?b?c?d?e?f?g?h?){5000}z"}}})",
       "properties.code.pattern", "more than 1000 rules and repetitions"},
      {R"({"type": "string", "format": "color"})", "format", "\"color\" is not supported"},
      {R"({"type": "string", "format": "date", "maxLength": 3})", "maxLength",
       "combined with format"},
      {R"({"type": "number", "minimum": 0.5})", "minimum", "non-integer bound"},
      {R"({"type": "integer", "minimum": 5, "maximum": 4})", "maximum", "no integer"},
      {R"({"type": "strin"})", "type", "unknown type"},
      {R"({"$ref": "http://example.com/s.json"})", "$ref", "only references inside"},
      {R"({"$ref": "#/$defs/missing"})", "$ref", "names nothing"},
      {R"({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})", "$defs.a",
       "no finite instance"},
      {R"({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}},
           "required": ["next"]}}, "$ref": "#/$defs/n"})",
       "$defs.n", "no finite instance"},
      {R"(false)", "", "matches nothing"},
      {R"({"type": "array", "items": false, "minItems": 1})", "minItems", "no array length"},
      {R"({"allOf": [{"type": "string"}, {"type": "integer"}]})", "allOf[1].type",
       "do not intersect"},
      {R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})", "allOf[1].pattern",
       "cannot be combined"},
      {R"({"allOf": [{"properties": {"a": {}}}, {"additionalProperties": false}]})",
       "allOf[1].additionalProperties", "reject the properties"},
      {R"({"enum": [1, 2], "minimum": 2})", "minimum", "combined with enum"},
      {R"({"type": "string", "maxLength": 1000000})", "maxLength", "not supported"},
      {R"({"type": "object", "required": ["a"], "additionalProperties": false})", "required",
       "additionalProperties: false forbids"},
      {R"({"properties": {"x": {"type": "integer", "maximum": 1e300}}})", "properties.x.maximum",
       "bounds beyond"},
      {R"({"type": "array", "minItems": 10000, "items": {"type": "array", "minItems": 10000,
           "items": {"type": "string", "minLength": 10000}}})",
       "", "too large"},
  };
  for (const RefusedCase& c : cases) {
    SCOPED_TRACE(c.schema);
    try {
      CompileJsonSchema(Json::parse(c.schema));
      ADD_FAILURE() << "compiled";
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(e.field(), c.path) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST(SchemaCompilerTest, EscapedPropertyNamesAndExtraKeys) {
  const std::shared_ptr<const Grammar> grammar = CompileJsonSchema(
      Json::parse(R"({"type": "object", "properties": {"a\"b": {"type": "integer"}}})"));
  EXPECT_TRUE(Accepts(grammar, R"({"a\"b": 1, "x": "y"})"));
  EXPECT_FALSE(Accepts(grammar, R"({"a\"b": "1"})"));
  EXPECT_FALSE(Accepts(grammar, "{\"a\"b\": 1}"));
}

TEST(SchemaCompilerTest, RefusesInvalidUtf8BuiltInCode) {
  Json schema = {{"type", "string"}, {"enum", {std::string("\xC3")}}};
  try {
    CompileJsonSchema(schema);
    FAIL() << "compiled";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "");
  }
}

TEST(SchemaCompilerTest, IgnoresKeywordsThatDoNotConstrain) {
  EXPECT_TRUE(Accepts(CompileJsonSchema(Json::parse(R"({"type": "array", "uniqueItems": false})")),
                      "[1, 1]"));
  EXPECT_TRUE(
      Accepts(CompileJsonSchema(Json::parse(R"({"type": "string", "x-order": 3})")), "\"a\""));
}

// Random generations from each schema: always JSON, always valid, always closed in time.
TEST(SchemaCompilerTest, RandomGenerationsParseAndSatisfyTheSchema) {
  std::mt19937 rng(1234);
  int checked = 0;
  for (const SchemaCase& c : SchemaCases()) {
    const Json schema = Json::parse(c.schema);
    const std::shared_ptr<const Grammar> grammar = CompileJsonSchema(schema);
    const int64_t shortest =
        GrammarMatcher(grammar, grammar_test::QwenTokens()).MinBytesToComplete();
    for (int run = 0; run < 6; ++run) {
      const int64_t max_tokens = shortest + 2 + run * 8;
      const grammar_test::Generation g = grammar_test::RandomGeneration(grammar, max_tokens, &rng);
      SCOPED_TRACE(std::string(c.schema) + "\n -> " + g.text);
      ASSERT_TRUE(g.complete);
      ASSERT_LE(g.tokens, max_tokens);
      ASSERT_TRUE(text::IsValidUtf8(g.text));
      Json value;
      try {
        value = Json::parse(g.text);
      } catch (const nlohmann::json::exception& e) {
        FAIL() << "not JSON: " << e.what();
      }
      EXPECT_TRUE(grammar_test::Validate(value, schema, schema)) << value.dump();
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// vLLM's guided_regex: the pattern matches the whole text, written raw (a quote or a
// newline is itself, not a JSON escape).
TEST(SchemaCompilerTest, ARegexMatchesTheWholeTextRaw) {
  const SchemaCase cases[] = {
      {"[a-z]+", {"abc", "z"}, {"", "abc1", "\"abc\"", " abc"}},
      {"^yes|no$", {"yes", "no"}, {"yesno", "no!", "ye"}},
      {R"(\d{3}-\d{4})", {"555-1234"}, {"x555-1234", "555-12345"}},
      {"a.c",
       {"a\"c",
        "a\xC3\xA9"
        "c"},
       {"a\\\"c", "a\nc"}},
      {R"(a\nb\s*)", {"a\nb", "a\nb \t"}, {"a\\nb"}},
      {"(cat|dog)s?", {"cat", "dogs"}, {"cats!", "a dog"}},
  };
  for (const SchemaCase& c : cases) {
    const std::shared_ptr<const Grammar> grammar = CompileRegex(c.schema);
    for (const std::string& text : c.accepted) {
      EXPECT_TRUE(Accepts(grammar, text)) << c.schema << " should accept " << text;
    }
    for (const std::string& text : c.rejected) {
      EXPECT_FALSE(Accepts(grammar, text)) << c.schema << " should reject " << text;
    }
  }
  try {
    CompileRegex("(?=a)b");
    ADD_FAILURE();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "");
    EXPECT_STREQ(e.what(), "lookaround, named groups and flags are not supported");
  }
}

// vLLM's guided_choice: one of the strings, whole, and nothing else.
TEST(SchemaCompilerTest, AChoiceIsExactlyOneOfTheStrings) {
  const std::vector<std::string> choices = {"yes", "no", "yes!", "\"quoted\"\n"};
  const std::shared_ptr<const Grammar> grammar = CompileChoice(choices);
  for (const std::string& text : choices) EXPECT_TRUE(Accepts(grammar, text)) << text;
  for (const std::string text : {"", "ye", "no!", "Yes", "yes!!", "\"quoted\""}) {
    EXPECT_FALSE(Accepts(grammar, text)) << text;
  }
  try {
    CompileChoice({});
    ADD_FAILURE();
  } catch (const FieldError& e) {
    EXPECT_STREQ(e.what(), "must list at least one choice");
  }
}

}  // namespace
}  // namespace qvl
