// llama-server's native POST /completion over HTTP with the tiny model: its request fields
// and its result objects, streamed and not, equal to what /v1/completions answers for the
// same prompt.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "server_harness.h"
#include "text/tokenizer.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

const Tokenizer& TinyTokenizer() {
  static const Tokenizer tokenizer = Tokenizer::FromFile(ModelDir() + "/tokenizer.json");
  return tokenizer;
}

// The chat template's text of the fixture's conversation: its golden answer is the
// greedy answer to this raw prompt.
std::string FixturePrompt(const TinyCase& c) {
  std::string prompt;
  for (const nlohmann::json& m : c.request["messages"]) {
    prompt += "<|im_start|>" + m["role"].get<std::string>() + "\n" +
              m["content"].get<std::string>() + "<|im_end|>\n";
  }
  return prompt + "<|im_start|>assistant\n";
}

class ServerNativeCompletionTest : public SharedServerTest {
 protected:
  static HttpResult Complete(const nlohmann::json& body) { return Post("/completion", body); }

  // The greedy result for `prompt` alone.
  static nlohmann::json Alone(const nlohmann::json& prompt, int n_predict) {
    const HttpResult r =
        Complete({{"prompt", prompt}, {"n_predict", n_predict}, {"temperature", 0}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json;
  }

  static void ExpectRefused(const nlohmann::json& body, const std::string& field) {
    const HttpResult r = Complete(body);
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_NE(r.json["error"]["message"].get<std::string>().find(field), std::string::npos)
        << r.body;
  }
};

TEST_F(ServerNativeCompletionTest, GreedyResultOfTheFixture) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const std::string prompt = FixturePrompt(c);
  const HttpResult r = Complete({{"model", c.request["model"]},
                                 {"prompt", prompt},
                                 {"n_predict", c.request["max_tokens"]},
                                 {"temperature", 0},
                                 {"cache_prompt", true},
                                 {"id_slot", -1}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  const nlohmann::json& j = r.json;
  EXPECT_EQ(j["content"], c.greedy_text);
  EXPECT_EQ(j["tokens"], nlohmann::json::array());
  EXPECT_EQ(j["stop"], true);
  EXPECT_EQ(j["id_slot"], 0);
  EXPECT_EQ(j["model"], c.request["model"]);
  EXPECT_EQ(j["prompt"], prompt);
  EXPECT_EQ(j["tokens_evaluated"], c.prompt_tokens);
  EXPECT_EQ(j["tokens_predicted"], c.completion_tokens);
  EXPECT_EQ(j["stop_type"], c.finish_reason == "length" ? "limit" : "eos");
  EXPECT_EQ(j["stopping_word"], "");
  EXPECT_EQ(j["truncated"], false);
  EXPECT_EQ(j["has_new_line"], c.greedy_text.find('\n') != std::string::npos);
  EXPECT_EQ(j["timings"]["predicted_n"], c.completion_tokens);
  EXPECT_EQ(j["timings"]["prompt_n"].get<int64_t>() + j["tokens_cached"].get<int64_t>(),
            c.prompt_tokens);
  EXPECT_FALSE(j.contains("completion_probabilities"));

  // The same prompt as token ids and text mixed: the ids up to the user's turn, the rest text.
  const size_t user = prompt.find("<|im_start|>user");
  const std::vector<int32_t> head = TinyTokenizer().Encode(prompt.substr(0, user));
  nlohmann::json mixed = head;
  mixed.push_back(prompt.substr(user));
  const HttpResult m = Complete({{"prompt", mixed},
                                 {"n_predict", c.request["max_tokens"]},
                                 {"temperature", 0},
                                 {"return_tokens", true}});
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(m.json["content"], c.greedy_text);
  EXPECT_EQ(m.json["prompt"], prompt);
  EXPECT_EQ(m.json["tokens_evaluated"], c.prompt_tokens);
  ASSERT_EQ(m.json["tokens"].size(), static_cast<size_t>(c.completion_tokens));
  EXPECT_EQ(TinyTokenizer().Decode(m.json["tokens"].get<std::vector<int32_t>>(), true),
            c.greedy_text);
}

TEST_F(ServerNativeCompletionTest, StreamedEventsEndWithTheResultAndNoDone) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const HttpResult r = Complete({{"prompt", FixturePrompt(c)},
                                 {"n_predict", c.request["max_tokens"]},
                                 {"temperature", 0},
                                 {"stream", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  EXPECT_EQ(r.body.find("[DONE]"), std::string::npos);
  const std::vector<nlohmann::json> events = SseEvents(r.body);
  ASSERT_GE(events.size(), 2u);
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i]["stop"], false) << i;
    EXPECT_EQ(events[i]["index"], 0);
    text += events[i]["content"].get<std::string>();
  }
  EXPECT_EQ(text, c.greedy_text);
  const nlohmann::json& last = events.back();
  EXPECT_EQ(last["stop"], true);
  EXPECT_EQ(last["content"], "");
  EXPECT_EQ(last["tokens_predicted"], c.completion_tokens);
  EXPECT_EQ(last["tokens_evaluated"], c.prompt_tokens);
  EXPECT_EQ(last["stop_type"], c.finish_reason == "length" ? "limit" : "eos");
  // Every event's token ids, as llama-server streams them: the answer's.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    for (const nlohmann::json& id : events[i]["tokens"]) ids.push_back(id.get<int32_t>());
  }
  EXPECT_EQ(TinyTokenizer().Decode(ids, true), c.greedy_text);
}

// n_predict 0 reads the prompt and answers nothing, as llama-server does.
TEST_F(ServerNativeCompletionTest, NPredictZeroReadsThePromptOnly) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const HttpResult r = Complete({{"prompt", FixturePrompt(c)}, {"n_predict", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["content"], "");
  EXPECT_EQ(r.json["tokens_predicted"], 0);
  EXPECT_EQ(r.json["tokens_evaluated"], c.prompt_tokens);
  EXPECT_EQ(r.json["stop_type"], "limit");
  EXPECT_EQ(r.json["generation_settings"]["n_predict"], 0);
}

// generation_settings: the request's own values, and for what it leaves unset the model's
// generation_config and the server's defaults, as /props gives them.
TEST_F(ServerNativeCompletionTest, GenerationSettingsAreTheRequestsResolved) {
  for (const bool stream : {false, true}) {
    const HttpResult r = Complete({{"prompt", "The sky is"},
                                   {"n_predict", 3},
                                   {"temperature", 0.5},
                                   {"top_k", 7},
                                   {"seed", 42},
                                   {"stop", {"zebra"}},
                                   {"n_probs", 2},
                                   {"logit_bias", {{1000, -2.5}}},
                                   {"stream", stream}});
    ASSERT_EQ(r.status, 200) << r.body;
    const nlohmann::json result = stream ? SseEvents(r.body).back() : r.json;
    const nlohmann::json& g = result["generation_settings"];
    EXPECT_EQ(g["temperature"], 0.5) << stream;
    EXPECT_EQ(g["top_k"], 7);
    EXPECT_EQ(g["seed"], 42);
    EXPECT_EQ(g["n_predict"], 3);
    EXPECT_EQ(g["stop"], nlohmann::json::array({"zebra"}));
    EXPECT_EQ(g["n_probs"], 2);
    EXPECT_EQ(g["logit_bias"], nlohmann::json::parse("[[1000, -2.5]]"));
    EXPECT_EQ(g["ignore_eos"], false);
    EXPECT_EQ(g["stream"], stream);
  }
  const HttpResult plain = Complete({{"prompt", "The sky is"}, {"n_predict", 2}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  const HttpResult props = Get(*harness_, "/props");
  ASSERT_EQ(props.status, 200) << props.body;
  const nlohmann::json& defaults = props.json["default_generation_settings"]["params"];
  const nlohmann::json& g = plain.json["generation_settings"];
  for (const char* key : {"temperature", "top_p", "top_k", "min_p", "repeat_penalty",
                          "presence_penalty", "frequency_penalty", "samplers"}) {
    EXPECT_EQ(g[key], defaults[key]) << key;
  }
  EXPECT_TRUE(g["seed"].is_null());
  EXPECT_EQ(g["n_predict"], 2);
}

// n_probs: each generated token with its id, logprob and the N best, as /v1/completions'
// logprobs give them for the same prompt.
TEST_F(ServerNativeCompletionTest, ProbabilitiesEqualTheLegacyLogprobs) {
  const std::string prompt = "The quick brown fox";
  const HttpResult native =
      Complete({{"prompt", prompt}, {"n_predict", 4}, {"temperature", 0}, {"n_probs", 2}});
  ASSERT_EQ(native.status, 200) << native.body;
  const HttpResult legacy =
      Post("/v1/completions",
           {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"logprobs", 2}});
  ASSERT_EQ(legacy.status, 200) << legacy.body;
  const nlohmann::json& entries = native.json["completion_probabilities"];
  const nlohmann::json& l = legacy.json["choices"][0]["logprobs"];
  ASSERT_EQ(entries.size(), 4u) << native.body;
  ASSERT_EQ(l["tokens"].size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const nlohmann::json& e = entries[k];
    EXPECT_EQ(e["token"], l["tokens"][k]) << k;
    EXPECT_NEAR(e["logprob"].get<double>(), l["token_logprobs"][k].get<double>(), 1e-6) << k;
    EXPECT_EQ(TinyTokenizer().TokenBytes(e["id"].get<int32_t>()), e["token"].get<std::string>());
    ASSERT_EQ(e["top_logprobs"].size(), 2u) << k;
    for (const nlohmann::json& top : e["top_logprobs"]) {
      const std::string token = top["token"];
      ASSERT_TRUE(l["top_logprobs"][k].contains(token)) << k << " " << token;
      EXPECT_NEAR(top["logprob"].get<double>(), l["top_logprobs"][k][token].get<double>(), 1e-6);
      EXPECT_EQ(TinyTokenizer().TokenBytes(top["id"].get<int32_t>()), token);
      EXPECT_EQ(top["bytes"].size(), token.size());
    }
  }
}

TEST_F(ServerNativeCompletionTest, StopStringIsTheStoppingWord) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const size_t at = c.greedy_text.find(" Malaysian");
  ASSERT_NE(at, std::string::npos) << c.greedy_text;
  for (const bool stream : {false, true}) {
    const HttpResult r = Complete({{"prompt", FixturePrompt(c)},
                                   {"n_predict", c.request["max_tokens"]},
                                   {"temperature", 0},
                                   {"stop", nlohmann::json::array({"Malaysian"})},
                                   {"stream", stream}});
    ASSERT_EQ(r.status, 200) << r.body;
    nlohmann::json result = r.json;
    std::string content;
    if (stream) {
      const std::vector<nlohmann::json> events = SseEvents(r.body);
      for (const nlohmann::json& e : events) content += e["content"].get<std::string>();
      result = events.back();
    } else {
      content = result["content"];
    }
    EXPECT_EQ(content, c.greedy_text.substr(0, at + 1)) << stream;
    EXPECT_EQ(result["stop_type"], "word");
    EXPECT_EQ(result["stopping_word"], "Malaysian");
  }
}

// Several prompts: an array of results (streamed, events told apart by index), each the
// prompt's alone.
TEST_F(ServerNativeCompletionTest, SeveralPromptsAnswerAnArray) {
  const std::vector<int32_t> ids = TinyTokenizer().Encode("Once upon a time");
  const nlohmann::json prompts = {"The sky is", ids};
  const std::vector<nlohmann::json> alone = {Alone(prompts[0], 5), Alone(prompts[1], 5)};
  nlohmann::json body = {{"prompt", prompts}, {"n_predict", 5}, {"temperature", 0}};
  const HttpResult r = Complete(body);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(r.json.is_array()) << r.body;
  ASSERT_EQ(r.json.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.json[i]["index"], i);
    EXPECT_EQ(r.json[i]["content"], alone[i]["content"]) << i;
    EXPECT_EQ(r.json[i]["prompt"], alone[i]["prompt"]) << i;
    EXPECT_EQ(r.json[i]["tokens_evaluated"], alone[i]["tokens_evaluated"]) << i;
    EXPECT_EQ(r.json[i]["tokens_predicted"], alone[i]["tokens_predicted"]) << i;
  }

  body["stream"] = true;
  const HttpResult streamed = Complete(body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::vector<std::string> texts(2);
  int stops = 0;
  for (const nlohmann::json& e : SseEvents(streamed.body)) {
    texts.at(e["index"].get<size_t>()) += e["content"].get<std::string>();
    if (e["stop"] == true) ++stops;
  }
  EXPECT_EQ(stops, 2);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(texts[i], alone[i]["content"]) << i;
}

// llama-server's list form of logit_bias: false bans the token.
TEST_F(ServerNativeCompletionTest, LogitBiasListBansAToken) {
  const nlohmann::json first =
      Complete(
          {{"prompt", "The sky is"}, {"n_predict", 1}, {"temperature", 0}, {"return_tokens", true}})
          .json;
  ASSERT_EQ(first["tokens"].size(), 1u) << first.dump();
  const int32_t banned = first["tokens"][0];
  const HttpResult r =
      Complete({{"prompt", "The sky is"},
                {"n_predict", 1},
                {"temperature", 0},
                {"return_tokens", true},
                {"logit_bias", nlohmann::json::array({nlohmann::json::array({banned, false})})}});
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json["tokens"].size(), 1u);
  EXPECT_NE(r.json["tokens"][0], banned);
}

// llama-server's grammar and json_schema bind the answer, as on its other routes.
TEST_F(ServerNativeCompletionTest, GrammarAndJsonSchemaBindTheAnswer) {
  const HttpResult yes_no = Complete({{"prompt", "Is the sky blue?"},
                                      {"n_predict", 8},
                                      {"temperature", 0},
                                      {"grammar", "root ::= \"yes\" | \"no\""}});
  ASSERT_EQ(yes_no.status, 200) << yes_no.body;
  EXPECT_TRUE(yes_no.json["content"] == "yes" || yes_no.json["content"] == "no") << yes_no.body;
  EXPECT_EQ(yes_no.json["stop_type"], "eos");
  const nlohmann::json schema = {{"type", "object"},
                                 {"properties", {{"ok", {{"type", "boolean"}}}}},
                                 {"required", {"ok"}},
                                 {"additionalProperties", false}};
  const HttpResult r = Complete(
      {{"prompt", "JSON:"}, {"n_predict", 40}, {"temperature", 0}, {"json_schema", schema}});
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json answer =
      nlohmann::json::parse(r.json["content"].get<std::string>(), nullptr, false);
  ASSERT_TRUE(answer.is_object()) << r.body;
  EXPECT_TRUE(answer["ok"].is_boolean()) << r.body;
}

TEST_F(ServerNativeCompletionTest, FieldsItCannotHonourAre400sNamingThem) {
  ExpectRefused({{"prompt", "Hi"}, {"dry_multiplier", 0.8}}, "dry_multiplier");
  ExpectRefused({{"prompt", "Hi"}, {"n_probs", 50}}, "n_probs");
  ExpectRefused({{"prompt", "Hi"}, {"echo", true}}, "echo");
  ExpectRefused({{"prompt", "Hi"}, {"n", 2}}, "n");
  ExpectRefused({{"prompt", "Hi"}, {"post_sampling_probs", true}}, "post_sampling_probs");
  ExpectRefused({{"prompt", "Hi"}, {"id_slot", "a"}}, "id_slot");
  ExpectRefused({{"prompt", {1, "a", nullptr}}}, "prompt");
  ExpectRefused({{"prompt", "Hi"}, {"logit_bias", nlohmann::json::parse("[[1]]")}},
                "logit_bias[0]");
  ExpectRefused({{"n_predict", 3}}, "prompt");
}

TEST_F(ServerNativeCompletionTest, GetIs405) {
  httplib::Client client = harness_->Client();
  const httplib::Result r = client.Get("/completion");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
}

}  // namespace
}  // namespace qvl::testing
