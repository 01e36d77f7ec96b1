// Guided decoding as the clients of vLLM and llama-server ask for it, over HTTP with the
// tiny model: a JSON schema in their spellings, vLLM's guided_choice and guided_regex,
// and GBNF grammars (llama-server's grammar, vLLM's guided_grammar), each binding the
// answer as response_format does, on /v1/chat/completions and /v1/completions.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "chat_question.h"
#include "server_harness.h"

namespace qvl::testing {
namespace {

using ServerGuidedDecodingTest = SharedServerTest;

// A schema in vLLM's and llama-server's spellings binds the answer as response_format's
// json_schema does. Before, json_object's schema was dropped (the answer was "{}") and the
// other fields were ignored (free text).
TEST_F(ServerGuidedDecodingTest, SchemasInOtherServersSpellingsBindTheAnswer) {
  const nlohmann::json schema = {{"type", "object"},
                                 {"properties", {{"a", {{"type", "integer"}}}}},
                                 {"required", {"a"}},
                                 {"additionalProperties", false}};
  const std::vector<std::pair<std::string, nlohmann::json>> spellings = {
      {"response_format", {{"type", "json_object"}, {"schema", schema}}},
      {"response_format", {{"type", "json_schema"}, {"schema", schema}}},
      {"guided_json", schema},
      {"guided_json", schema.dump()},
      {"json_schema", schema},
      {"structured_outputs", {{"json", schema}}},
  };
  for (const auto& [key, value] : spellings) {
    nlohmann::json body = Question(40);
    body[key] = value;
    const HttpResult r = Post("/v1/chat/completions", body);
    ASSERT_EQ(r.status, 200) << key << ": " << r.body;
    const nlohmann::json answer = nlohmann::json::parse(Content(r), nullptr, false);
    ASSERT_TRUE(answer.is_object()) << key << ": " << Content(r);
    EXPECT_EQ(answer.size(), 1u) << key << ": " << Content(r);
    EXPECT_TRUE(answer["a"].is_number_integer()) << key << ": " << Content(r);
  }

  nlohmann::json both = Question(4);
  both["guided_json"] = schema;
  both["response_format"] = {{"type", "json_object"}};
  const HttpResult conflict = Post("/v1/chat/completions", both);
  EXPECT_EQ(conflict.status, 400);
  EXPECT_EQ(conflict.json["error"]["param"], "guided_json");
}

// vLLM's guided_choice and guided_regex, and their structured_outputs spellings, bind
// the answer: it is one of the strings, or text the regular expression matches whole,
// streamed or not, on both OpenAI routes. They were 400s.
TEST_F(ServerGuidedDecodingTest, AChoiceOrARegexBindsTheAnswer) {
  const std::vector<std::string> choices = {"yes", "no", "maybe later"};
  const std::string pattern = "[a-z]{2,6}( [a-z]{2,6})?";
  const std::vector<std::pair<std::string, nlohmann::json>> spellings = {
      {"guided_choice", choices},
      {"structured_outputs", {{"choice", choices}}},
      {"guided_regex", pattern},
      {"structured_outputs", {{"regex", pattern}}},
  };
  for (const auto& [key, value] : spellings) {
    const bool choice = value.is_array() || value.contains("choice");
    nlohmann::json body = Question(8);
    body[key] = value;
    const HttpResult r = Post("/v1/chat/completions", body);
    ASSERT_EQ(r.status, 200) << key << ": " << r.body;
    const std::string content = Content(r);
    if (choice) {
      EXPECT_NE(std::find(choices.begin(), choices.end(), content), choices.end()) << content;
      EXPECT_EQ(r.json["choices"][0]["finish_reason"], "stop");
    } else {
      EXPECT_TRUE(std::regex_match(content, std::regex(pattern))) << content;
    }
    body["stream"] = true;
    const HttpResult streamed = Post("/v1/chat/completions", body);
    ASSERT_EQ(streamed.status, 200) << streamed.body;
    EXPECT_EQ(StreamedText(SseEvents(streamed.body)), content);
  }

  const HttpResult text = Post("/v1/completions", {{"prompt", "The sky is"},
                                                   {"max_tokens", 8},
                                                   {"temperature", 0},
                                                   {"guided_choice", {"blue", "grey"}}});
  ASSERT_EQ(text.status, 200) << text.body;
  const std::string answer = text.json["choices"][0]["text"];
  EXPECT_TRUE(answer == "blue" || answer == "grey") << answer;
  const HttpResult digits =
      Post("/v1/completions", {{"prompt", "Year:"}, {"max_tokens", 8}, {"guided_regex", "\\d{4}"}});
  ASSERT_EQ(digits.status, 200) << digits.body;
  EXPECT_TRUE(std::regex_match(digits.json["choices"][0]["text"].get<std::string>(),
                               std::regex("[0-9]{4}")))
      << digits.body;

  const std::vector<Refusal> bad = {
      {{{"guided_choice", {"a"}}, {"guided_regex", "b"}},
       "guided_regex",
       "guided_regex: cannot be combined with guided_choice"},
      {{{"guided_choice", {"a"}}, {"response_format", {{"type", "json_object"}}}},
       "guided_choice",
       "guided_choice: cannot be combined with response_format or a forced tool call"},
      {{{"structured_outputs", {{"choice", {"a"}}, {"regex", "b"}}}},
       "structured_outputs.regex",
       "structured_outputs.regex: cannot be combined with structured_outputs.choice"},
      {{{"guided_choice", {"a", 2}}},
       "guided_choice[1]",
       "guided_choice[1]: expected a string, got integer"},
      {{{"guided_choice", nlohmann::json::array()}},
       "guided_choice",
       "guided_choice: must list at least one choice"},
      {{{"guided_regex", "(a"}}, "guided_regex", "guided_regex: unbalanced '('"},
      {{{"structured_outputs", {{"regex", 5}}}},
       "structured_outputs.regex",
       "structured_outputs.regex: expected a string (a regular expression), got integer"},
  };
  ExpectRefused(Chat, bad);
}

// vLLM's guided_grammar and structured_outputs.grammar and llama-server's grammar (GBNF,
// also the EBNF vLLM's xgrammar reads) bind the answer, streamed or not, on both OpenAI
// routes. They were 400s.
TEST_F(ServerGuidedDecodingTest, AGbnfGrammarBindsTheAnswer) {
  const std::string arithmetic =
      "root ::= expr\nexpr ::= term ([-+*/] term)*\nterm ::= [0-9]+  # digits\n";
  const std::regex sums("[0-9]+([-+*/][0-9]+)*");
  const std::vector<std::pair<std::string, nlohmann::json>> spellings = {
      {"grammar", arithmetic},
      {"guided_grammar", arithmetic},
      {"structured_outputs", {{"grammar", arithmetic}}},
  };
  for (const auto& [key, value] : spellings) {
    nlohmann::json body = Question(8);
    body[key] = value;
    const HttpResult r = Post("/v1/chat/completions", body);
    ASSERT_EQ(r.status, 200) << key << ": " << r.body;
    const std::string content = Content(r);
    EXPECT_TRUE(std::regex_match(content, sums)) << key << ": " << content;
    body["stream"] = true;
    const HttpResult streamed = Post("/v1/chat/completions", body);
    ASSERT_EQ(streamed.status, 200) << streamed.body;
    EXPECT_EQ(StreamedText(SseEvents(streamed.body)), content);
  }

  nlohmann::json yes_no = Question(8);
  yes_no["grammar"] = "root ::= \"yes\" | \"no\"";
  const HttpResult answer = Post("/v1/chat/completions", yes_no);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_TRUE(Content(answer) == "yes" || Content(answer) == "no") << answer.body;
  EXPECT_EQ(answer.json["choices"][0]["finish_reason"], "stop");

  const HttpResult text =
      Post("/v1/completions", {{"prompt", "2+2="}, {"max_tokens", 8}, {"grammar", arithmetic}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_TRUE(std::regex_match(text.json["choices"][0]["text"].get<std::string>(), sums))
      << text.body;

  nlohmann::json broken = Question(8);
  broken["grammar"] = "root ::= (\"a\"";
  const HttpResult syntax = Post("/v1/chat/completions", broken);
  EXPECT_EQ(syntax.status, 400);
  EXPECT_EQ(syntax.json["error"]["param"], "grammar");
  EXPECT_EQ(syntax.json["error"]["message"].get<std::string>().rfind("grammar: line 1, column ", 0),
            0u)
      << syntax.body;
  nlohmann::json number = Question(8);
  number["guided_grammar"] = 5;
  EXPECT_EQ(Post("/v1/chat/completions", number).json["error"]["message"],
            "guided_grammar: expected a string (a GBNF grammar), got integer");
  nlohmann::json both = yes_no;
  both["guided_regex"] = "a";
  EXPECT_EQ(Post("/v1/chat/completions", both).json["error"]["message"],
            "grammar: cannot be combined with guided_regex");
}

}  // namespace
}  // namespace qvl::testing
