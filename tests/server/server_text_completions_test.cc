// /v1/completions as the clients of OpenAI's legacy API and of vLLM use it, over HTTP with
// the tiny model: several prompts in one request with n answers each, echo (with the
// prompt's logprobs: how lm-evaluation-harness scores a text), logit_bias and
// response_format, and vLLM's prompt_logprobs on chat, which scores a prompt as the echo
// does. Each was a 400 before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "golden_tensors.h"
#include "server_harness.h"
#include "text/tokenizer.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

const Tokenizer& TinyTokenizer() {
  static const Tokenizer tokenizer = Tokenizer::FromFile(ModelDir() + "/tokenizer.json");
  return tokenizer;
}

std::vector<int32_t> Ids(const std::string& text) { return TinyTokenizer().Encode(text); }

class ServerTextCompletionsTest : public SharedServerTest {
 protected:
  static HttpResult Complete(const nlohmann::json& body) { return Post("/v1/completions", body); }

  // The greedy answer to `prompt` alone.
  static nlohmann::json Alone(const nlohmann::json& prompt, int max_tokens) {
    const HttpResult r =
        Complete({{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json;
  }
};

// Choice i * n + j answers prompt i, streamed or not, token ids or text, and the usage
// counts each prompt once and every answer.
TEST_F(ServerTextCompletionsTest, EveryPromptGetsItsAnswersInOrder) {
  const nlohmann::json prompts = {"The sky is", Ids("Once upon a time"), "1, 2, 3,"};
  std::vector<std::string> alone;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (const nlohmann::json& prompt : prompts) {
    const nlohmann::json a = Alone(prompt, 5);
    alone.push_back(a["choices"][0]["text"]);
    prompt_tokens += a["usage"]["prompt_tokens"].get<int64_t>();
    completion_tokens += a["usage"]["completion_tokens"].get<int64_t>();
  }
  nlohmann::json body = {{"prompt", prompts}, {"max_tokens", 5}, {"temperature", 0}, {"n", 2}};
  const HttpResult r = Complete(body);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json["choices"].size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.json["choices"][i]["index"], i);
    EXPECT_EQ(r.json["choices"][i]["text"], alone[i / 2]) << i;
  }
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 2 * completion_tokens);

  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  const HttpResult streamed = Complete(body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const std::vector<nlohmann::json> events = SseEvents(streamed.body);
  std::vector<std::string> texts(6);
  int finishes = 0;
  for (const nlohmann::json& e : events) {
    if (e == "[DONE]" || e["choices"].empty()) continue;
    const nlohmann::json& choice = e["choices"][0];
    texts.at(choice["index"].get<size_t>()) += choice["text"].get<std::string>();
    if (!choice["finish_reason"].is_null()) ++finishes;
  }
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(texts[i], alone[i / 2]) << i;
  EXPECT_EQ(finishes, 6);
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(events[events.size() - 2]["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(events[events.size() - 2]["usage"]["completion_tokens"], 2 * completion_tokens);
}

// echo: the answer's text starts with its prompt's, a text as sent or the text of ids.
TEST_F(ServerTextCompletionsTest, EchoRepeatsEachPrompt) {
  const std::vector<int32_t> ids = Ids("Once upon");
  const nlohmann::json prompts = {"The sky is", ids};
  const std::vector<std::string> texts = {"The sky is", TinyTokenizer().Decode(ids, false)};
  nlohmann::json body = {
      {"prompt", prompts}, {"max_tokens", 3}, {"temperature", 0}, {"echo", true}};
  const HttpResult r = Complete(body);
  ASSERT_EQ(r.status, 200) << r.body;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.json["choices"][i]["text"],
              texts[i] + Alone(prompts[i], 3)["choices"][0]["text"].get<std::string>());
  }
}

// echo with logprobs scores the prompt: each prompt token's logprob and alternatives are
// those of the answer's first token to the prompt cut before it, and the first token has
// none (null). The lists go on with the answer's tokens, at offsets into the echoed text.
TEST_F(ServerTextCompletionsTest, EchoWithLogprobsScoresEveryPromptToken) {
  const std::vector<int32_t> ids = Ids("The quick brown fox jumps over the lazy dog, again");
  const std::string prompt_text = TinyTokenizer().Decode(ids, false);
  nlohmann::json body = {
      {"prompt", ids}, {"max_tokens", 2}, {"temperature", 0}, {"echo", true}, {"logprobs", 3}};
  const HttpResult r = Complete(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& choice = r.json["choices"][0];
  const nlohmann::json& l = choice["logprobs"];
  const size_t n = ids.size();
  ASSERT_EQ(l["tokens"].size(), n + 2) << r.body;
  EXPECT_TRUE(l["token_logprobs"][0].is_null());
  EXPECT_TRUE(l["top_logprobs"][0].is_null());
  std::string joined;
  for (size_t k = 0; k < n + 2; ++k) {
    EXPECT_EQ(l["text_offset"][k], joined.size()) << k;
    joined += l["tokens"][k].get<std::string>();
  }
  EXPECT_EQ(joined, choice["text"]);
  EXPECT_EQ(choice["text"].get<std::string>().rfind(prompt_text, 0), 0u);
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], n);

  for (const size_t k : {size_t{1}, n / 2, n - 1, n}) {
    const std::vector<int32_t> before(ids.begin(), ids.begin() + static_cast<int64_t>(k));
    const HttpResult cut =
        Complete({{"prompt", before}, {"max_tokens", 1}, {"temperature", 0}, {"logprobs", 3}});
    ASSERT_EQ(cut.status, 200) << cut.body;
    const nlohmann::json& expected = cut.json["choices"][0]["logprobs"]["top_logprobs"][0];
    ASSERT_EQ(expected.size(), 3u) << cut.body;
    const nlohmann::json& top = l["top_logprobs"][k];
    for (const auto& [token, logprob] : expected.items()) {
      ASSERT_TRUE(top.contains(token)) << k << ": " << token << " in " << top.dump();
      EXPECT_NEAR(top[token].get<double>(), logprob.get<double>(), 1e-4) << k << ": " << token;
    }
    if (expected.contains(l["tokens"][k])) {
      EXPECT_NEAR(l["token_logprobs"][k].get<double>(),
                  expected[l["tokens"][k].get<std::string>()].get<double>(), 1e-4);
    }
  }

  // max_tokens 0: the prompt alone, with the same scores.
  nlohmann::json alone = body;
  alone["max_tokens"] = 0;
  const HttpResult scored = Complete(alone);
  ASSERT_EQ(scored.status, 200) << scored.body;
  const nlohmann::json& only = scored.json["choices"][0];
  EXPECT_EQ(only["text"], prompt_text);
  EXPECT_EQ(only["finish_reason"], "length");
  EXPECT_EQ(scored.json["usage"]["completion_tokens"], 0);
  ASSERT_EQ(only["logprobs"]["tokens"].size(), n);
  for (const char* list : {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
    for (size_t k = 0; k < n; ++k) EXPECT_EQ(only["logprobs"][list][k], l[list][k]) << list << k;
  }

  // Streamed, the prompt's lists come with the answer's first chunk.
  body["stream"] = true;
  const HttpResult streamed = Complete(body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  nlohmann::json tokens = nlohmann::json::array(), logprobs = nlohmann::json::array();
  std::string text;
  for (const nlohmann::json& e : SseEvents(streamed.body)) {
    if (e == "[DONE]" || e["choices"].empty() || e["choices"][0]["logprobs"].is_null()) continue;
    text += e["choices"][0]["text"].get<std::string>();
    for (const nlohmann::json& t : e["choices"][0]["logprobs"]["tokens"]) tokens.push_back(t);
    for (const nlohmann::json& p : e["choices"][0]["logprobs"]["token_logprobs"]) {
      logprobs.push_back(p);
    }
  }
  EXPECT_EQ(text, choice["text"]);
  EXPECT_EQ(tokens, l["tokens"]);
  EXPECT_EQ(logprobs, l["token_logprobs"]);
}

// The prompt's scores are the reference's (transformers): the fixture's prompt followed by
// its 15 first greedy tokens, echoed with logprobs, gives at each greedy token the
// logprobs of the reference's logits that chose it (decode.topk_logits, row k: after the
// prompt and greedy tokens 0..k-1): the same five best tokens in the same order, and
// their differences (the log-sum-exp cancels). At the prompt's end the reference's whole
// logits give the chosen token's logprob itself.
TEST_F(ServerTextCompletionsTest, EchoedLogprobsAreTheReferences) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const nlohmann::json meta = nlohmann::json::parse(
      ReadFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/" + c.name + "/meta.json"));
  const GoldenTensors golden(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/" + c.name);
  const std::vector<int64_t> top_ids = golden.I64("decode.topk_ids");
  const std::vector<float> top_logits = golden.F32("decode.topk_logits");
  const int64_t width = golden.Shape("decode.topk_ids")[1];
  std::vector<int32_t> ids = meta["input_ids"].get<std::vector<int32_t>>();
  const size_t prompt = ids.size();
  const std::vector<int32_t> greedy = meta["greedy_tokens"].get<std::vector<int32_t>>();
  constexpr size_t kSteps = 15;
  ids.insert(ids.end(), greedy.begin(), greedy.begin() + kSteps);

  const HttpResult r = Complete(
      {{"prompt", ids}, {"max_tokens", 1}, {"temperature", 0}, {"echo", true}, {"logprobs", 5}});
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& l = r.json["choices"][0]["logprobs"];
  ASSERT_EQ(l["tokens"].size(), ids.size() + 1);
  for (size_t k = 0; k <= kSteps; ++k) {
    const nlohmann::json& top = l["top_logprobs"][prompt + k];
    const int64_t row = static_cast<int64_t>(k) * width;
    // Only tokens whose bytes are whole characters: a piece of one is a key of U+FFFD,
    // which several tokens share.
    std::vector<std::pair<std::string, float>> expected;
    for (int64_t i = 0; i < 5; ++i) {
      const std::string text(TinyTokenizer().TokenBytes(static_cast<int32_t>(top_ids[row + i])));
      if (nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) ==
          nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::ignore)) {
        expected.emplace_back(text, top_logits[row + i] - top_logits[row]);
      }
    }
    ASSERT_FALSE(expected.empty());
    ASSERT_EQ(expected.front().second, 0.0f) << "the best token is a piece of a character";
    const double best = top.at(expected.front().first).get<double>();
    for (const auto& [text, difference] : expected) {
      ASSERT_TRUE(top.contains(text)) << k << ": " << text << " in " << top.dump();
      EXPECT_NEAR(top[text].get<double>() - best, difference, 1e-4) << k << ": " << text;
    }
    if (k < kSteps) {
      EXPECT_EQ(l["tokens"][prompt + k], expected.front().first);
    }
  }
  const std::vector<float> last = golden.F32("logits_last");
  const float peak = *std::max_element(last.begin(), last.end());
  double sum = 0;
  for (const float x : last) sum += std::exp(static_cast<double>(x - peak));
  const double want = last[static_cast<size_t>(greedy[0])] - peak - std::log(sum);
  EXPECT_NEAR(l["token_logprobs"][prompt].get<double>(), want, 1e-4);
}

// vLLM's prompt_logprobs on chat score the rendered conversation as the echo of the same
// text does: each token's entry by id with its rank, among its alternatives' (ranks 1 to N);
// /v1/completions gives the same for the same text.
TEST_F(ServerTextCompletionsTest, VllmPromptLogprobsAreTheEchoedOnes) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const nlohmann::json meta = nlohmann::json::parse(
      ReadFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/" + c.name + "/meta.json"));
  nlohmann::json chat = c.request;
  chat["max_tokens"] = 1;
  chat["prompt_logprobs"] = 2;
  const HttpResult scored = Post("/v1/chat/completions", chat);
  ASSERT_EQ(scored.status, 200) << scored.body;
  const nlohmann::json& entries = scored.json["prompt_logprobs"];
  const std::vector<int32_t> ids = meta["input_ids"].get<std::vector<int32_t>>();
  ASSERT_EQ(entries.size(), ids.size());
  EXPECT_TRUE(entries[0].is_null());

  const HttpResult echoed = Complete(
      {{"prompt", meta["prompt_text"]}, {"max_tokens", 0}, {"echo", true}, {"logprobs", 2}});
  ASSERT_EQ(echoed.status, 200) << echoed.body;
  const nlohmann::json& l = echoed.json["choices"][0]["logprobs"];
  ASSERT_EQ(l["tokens"].size(), ids.size());
  for (size_t k = 1; k < ids.size(); ++k) {
    const nlohmann::json& entry = entries[k];
    ASSERT_TRUE(entry.contains(std::to_string(ids[k]))) << k << ": " << entry.dump();
    const nlohmann::json& own = entry[std::to_string(ids[k])];
    EXPECT_EQ(own["logprob"], l["token_logprobs"][k]) << k;
    EXPECT_EQ(own["decoded_token"], l["tokens"][k]) << k;
    EXPECT_GE(own["rank"].get<int>(), 1);
    EXPECT_LE(entry.size(), 3u);
    std::vector<int> ranks;
    for (const auto& [id, e] : entry.items()) ranks.push_back(e["rank"].get<int>());
    EXPECT_NE(std::find(ranks.begin(), ranks.end(), 1), ranks.end()) << entry.dump();
  }

  // The same on /v1/completions, in each choice.
  const HttpResult raw = Complete({{"prompt", meta["prompt_text"]},
                                   {"max_tokens", 1},
                                   {"n", 2},
                                   {"temperature", 0},
                                   {"prompt_logprobs", 2}});
  ASSERT_EQ(raw.status, 200) << raw.body;
  for (const nlohmann::json& choice : raw.json["choices"]) {
    EXPECT_EQ(choice["prompt_logprobs"], entries);
  }

  chat["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", chat);
  EXPECT_EQ(streamed.status, 400) << streamed.body;
  EXPECT_EQ(streamed.json["error"]["param"], "prompt_logprobs");
}

// logit_bias and response_format, as on chat.
TEST_F(ServerTextCompletionsTest, LogitBiasAndResponseFormatShapeTheAnswer) {
  const int32_t zebra = Ids(" zebra")[0];
  const HttpResult biased = Complete({{"prompt", "The sky is"},
                                      {"max_tokens", 3},
                                      {"ignore_eos", true},
                                      {"logit_bias", {{std::to_string(zebra), 100}}}});
  ASSERT_EQ(biased.status, 200) << biased.body;
  const std::string piece(TinyTokenizer().TokenBytes(zebra));
  EXPECT_EQ(biased.json["choices"][0]["text"], piece + piece + piece);

  const nlohmann::json schema = {{"type", "object"},
                                 {"properties", {{"a", {{"type", "integer"}}}}},
                                 {"required", {"a"}},
                                 {"additionalProperties", false}};
  const HttpResult json = Complete(
      {{"prompt", "JSON:"},
       {"max_tokens", 40},
       {"n", 2},
       {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}}});
  ASSERT_EQ(json.status, 200) << json.body;
  for (const nlohmann::json& choice : json.json["choices"]) {
    const nlohmann::json answer =
        nlohmann::json::parse(choice["text"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(answer.is_object()) << choice["text"];
    EXPECT_TRUE(answer["a"].is_number_integer()) << choice["text"];
  }
}

}  // namespace
}  // namespace qvl::testing
