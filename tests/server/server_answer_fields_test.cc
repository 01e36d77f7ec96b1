// What the fields of the servers qvl replaces do to an answer, over HTTP with the tiny
// model: vLLM's stop_token_ids, min_tokens, stop_reason, allowed_token_ids, bad_words and
// include_stop_str_in_output, and llama-server's other samplers. Each was a 400 or
// missing before; each test asserts on the answer's text or tokens.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "chat_question.h"
#include "server_harness.h"

namespace qvl::testing {
namespace {

class ServerAnswerFieldsTest : public SharedServerTest {
 protected:
  // The id of the vocabulary token whose bytes are `text` (a logprobs entry's token).
  static int32_t IdOfBytes(const std::string& text) {
    const Tokenizer& tokenizer = harness_->engine()->tokenizer();
    for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
      if (tokenizer.TokenBytes(id) == text) return id;
    }
    ADD_FAILURE() << "no token is \"" << text << "\"";
    return -1;
  }
  // Of an answer's logprobs `tokens`, the first unlike every one before it (the tiny model
  // repeats itself): its index (tokens.size() when there is none) and the text before it.
  static std::pair<size_t, std::string> FirstNewToken(const nlohmann::json& tokens) {
    size_t k = 1;
    std::string before = tokens[0]["token"];
    while (k < tokens.size() &&
           before.find(tokens[k]["token"].get<std::string>()) != std::string::npos) {
      before += tokens[k++]["token"].get<std::string>();
    }
    return {k, before};
  }
  // The greedy answer to Question(8), with its tokens' logprobs.
  static HttpResult AnswerWithLogprobs() {
    nlohmann::json body = Question(8);
    body["logprobs"] = true;
    return Post("/v1/chat/completions", body);
  }
  // Question(8) as a raw prompt on /v1/completions: the same answer.
  static nlohmann::json RawQuestion() {
    return {{"prompt", "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n"},
            {"max_tokens", 8},
            {"temperature", 0}};
  }
};

// vLLM's stop_token_ids end the answer on any id listed, without its text, and its
// min_tokens holds the answer's ends back until it has that many tokens; both were 400s
// (stop_token_ids unless they were the model's own end tokens).
TEST_F(ServerAnswerFieldsTest, StopTokenIdsAndMinTokensShapeTheAnswer) {
  nlohmann::json body = Question(8);
  body["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", body);
  ASSERT_EQ(free.status, 200) << free.body;
  const nlohmann::json& tokens = free.json["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(tokens.size(), 8u);
  const auto [k, before] = FirstNewToken(tokens);
  ASSERT_LT(k, tokens.size()) << free.body;
  const int32_t id = IdOfBytes(tokens[k]["token"]);

  body["stop_token_ids"] = {7, id};
  const HttpResult stopped = Post("/v1/chat/completions", body);
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(Content(stopped), before);
  EXPECT_EQ(stopped.json["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(stopped.json["usage"]["completion_tokens"], k + 1);
  nlohmann::json streaming = body;
  streaming["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", streaming);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const std::vector<nlohmann::json> events = SseEvents(streamed.body);
  EXPECT_EQ(StreamedText(events), before);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2]["choices"][0]["finish_reason"], "stop");

  // min_tokens: the id cannot end the answer before its seventh token.
  body["min_tokens"] = 6;
  const HttpResult held = Post("/v1/chat/completions", body);
  ASSERT_EQ(held.status, 200) << held.body;
  EXPECT_GE(held.json["usage"]["completion_tokens"], 6);
  EXPECT_GT(held.json["usage"]["completion_tokens"], k + 1);
  EXPECT_EQ(Content(held).rfind(before, 0), 0u) << Content(held);
  EXPECT_GT(Content(held).size(), before.size());

  const HttpResult text = Post("/v1/completions", {{"prompt", "The sky"},
                                                   {"max_tokens", 4},
                                                   {"temperature", 0},
                                                   {"ignore_eos", true},
                                                   {"min_tokens", 4}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.json["usage"]["completion_tokens"], 4);

  const std::vector<Refusal> bad = {
      {{{"stop_token_ids", {1, 151936}}},
       "stop_token_ids[1]",
       "stop_token_ids[1]: token id 151936 is not in the vocabulary (0 to 151935)"},
      {{{"stop_token_ids", {"7"}}},
       "stop_token_ids[0]",
       "stop_token_ids[0]: expected a token id (an integer), got \"7\""},
      {{{"stop_token_ids", std::vector<int>(65, 7)}},
       "stop_token_ids",
       "stop_token_ids: at most 64 stop token ids are supported, got 65"},
      {{{"min_tokens", 9}}, "min_tokens", "min_tokens: must be at most max_tokens (8), got 9"},
      {{{"min_tokens", -1}}, "min_tokens", "min_tokens: must be between 0 and 1048576, got -1"},
  };
  ExpectRefused(Chat, bad);
}

// vLLM's stop_reason beside finish_reason, on both OpenAI routes, streamed (in the chunk
// that carries the finish_reason) and not: the stop string that ended the answer, the stop
// token id that did, else null (an end-of-sequence token, max_tokens). Clients written
// for vLLM read it to know which stop matched.
TEST_F(ServerAnswerFieldsTest, StopReasonNamesTheStopThatEndedTheAnswer) {
  nlohmann::json chat = Question(8);
  const HttpResult free = AnswerWithLogprobs();
  ASSERT_EQ(free.status, 200) << free.body;
  const std::string answer = Content(free);
  const std::string stop = free.json["choices"][0]["logprobs"]["content"][2]["token"];
  ASSERT_NE(answer.find(stop), std::string::npos);
  const int32_t id = IdOfBytes(stop);
  // The same conversation as a raw prompt gives the same answer on /v1/completions.
  const nlohmann::json text = RawQuestion();
  const HttpResult raw = Post("/v1/completions", text);
  ASSERT_EQ(raw.status, 200) << raw.body;
  ASSERT_EQ(raw.json["choices"][0]["text"], answer);

  using End = std::pair<nlohmann::json, nlohmann::json>;
  // The finish_reason and stop_reason of the answer to `body` on `path`, not streamed
  // and streamed (which must agree).
  auto ends = [](const std::string& path, nlohmann::json body) {
    const HttpResult plain = Post(path, body);
    EXPECT_EQ(plain.status, 200) << plain.body;
    if (plain.status != 200) return End();
    const nlohmann::json choice = plain.json["choices"][0];
    EXPECT_TRUE(choice.contains("stop_reason")) << plain.body;
    body["stream"] = true;
    const HttpResult streamed = Post(path, body);
    EXPECT_EQ(streamed.status, 200) << streamed.body;
    const std::vector<nlohmann::json> events = SseEvents(streamed.body);
    EXPECT_GE(events.size(), 2u) << streamed.body;
    if (events.size() < 2) return End();
    const nlohmann::json& last = events[events.size() - 2]["choices"][0];
    EXPECT_EQ(last["finish_reason"], choice["finish_reason"]) << streamed.body;
    EXPECT_TRUE(last.contains("stop_reason")) << streamed.body;
    EXPECT_EQ(last["stop_reason"], choice["stop_reason"]) << streamed.body;
    return End(choice["finish_reason"], choice["stop_reason"]);
  };
  for (const auto& [path, body] :
       {std::pair("/v1/chat/completions", chat), std::pair("/v1/completions", text)}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(ends(path, body), End("length", nullptr));
    nlohmann::json stopped = body;
    stopped["stop"] = {"\x01never", stop};
    EXPECT_EQ(ends(path, stopped), End("stop", stop));
    nlohmann::json by_token = body;
    by_token["stop_token_ids"] = {7, id};
    EXPECT_EQ(ends(path, by_token), End("stop", id));
  }
  // An end-of-sequence token (logit_bias makes it the first) ends the answer with none,
  // also one listed in stop_token_ids.
  chat["logit_bias"] = {{"151645", 100}};
  chat["stop_token_ids"] = {151645};
  EXPECT_EQ(ends("/v1/chat/completions", chat), End("stop", nullptr));
}

// llama-server's typical_p, top_n_sigma, XTC and Mirostat shape a sampled answer, in the
// default chain or the client's; they were 400s. A top-n-sigma floor just below the best
// logit leaves the greedy answer, as Mirostat with a target of 0 bits does; XTC with a
// threshold of 0 leaves only the least likely token.
TEST_F(ServerAnswerFieldsTest, LlamaServersOtherSamplersShapeTheAnswer) {
  nlohmann::json greedy = Question(6);
  greedy["logprobs"] = true;
  greedy["top_logprobs"] = 1;
  const HttpResult plain = Post("/v1/chat/completions", greedy);
  ASSERT_EQ(plain.status, 200) << plain.body;

  nlohmann::json sampled = Question(6);
  sampled["temperature"] = 1.0;
  sampled["seed"] = 7;
  sampled["top_n_sigma"] = 0.0001;
  const HttpResult sigma = Post("/v1/chat/completions", sampled);
  ASSERT_EQ(sigma.status, 200) << sigma.body;
  EXPECT_EQ(Content(sigma), Content(plain));
  sampled["samplers"] = {"top_n_sigma", "temperature"};
  EXPECT_EQ(Content(Post("/v1/chat/completions", sampled)), Content(plain));
  // Mirostat with a surprise target of 0 bits keeps the best token alone.
  sampled.erase("top_n_sigma");
  sampled.erase("samplers");
  sampled["mirostat_tau"] = 0;
  sampled["mirostat_eta"] = 0;
  for (const int version : {1, 2}) {
    sampled["mirostat"] = version;
    EXPECT_EQ(Content(Post("/v1/chat/completions", sampled)), Content(plain)) << version;
  }

  sampled = Question(1);
  sampled["temperature"] = 1.0;
  sampled["xtc_probability"] = 1.0;
  sampled["xtc_threshold"] = 0.0;
  sampled["logprobs"] = true;
  sampled["top_logprobs"] = 1;
  const HttpResult xtc = Post("/v1/chat/completions", sampled);
  ASSERT_EQ(xtc.status, 200) << xtc.body;
  const nlohmann::json& first = xtc.json["choices"][0]["logprobs"]["content"][0];
  EXPECT_NE(first["token"], plain.json["choices"][0]["logprobs"]["content"][0]["token"]);
  EXPECT_LT(first["logprob"].get<double>(), first["top_logprobs"][0]["logprob"].get<double>());

  sampled = Question(2);
  sampled["temperature"] = 1.0;
  sampled["typical_p"] = 0.5;
  EXPECT_EQ(Post("/v1/chat/completions", sampled).status, 200);
  sampled["samplers"] = "kt";
  EXPECT_EQ(Post("/v1/chat/completions", sampled).json["error"]["message"],
            "samplers: leaves out typ_p, which typical_p turns on; list it or leave typical_p "
            "out");
}

// vLLM's allowed_token_ids leave only those tokens to sample, and its bad_words keep their
// tokens out of the answer (tokenized as vLLM does: as written and after a space); both
// were 400s.
TEST_F(ServerAnswerFieldsTest, AllowedTokenIdsAndBadWordsBindTheAnswer) {
  nlohmann::json body = Question(8);
  body["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", body);
  ASSERT_EQ(free.status, 200) << free.body;
  const std::string first = free.json["choices"][0]["logprobs"]["content"][0]["token"];
  const int32_t first_id = IdOfBytes(first);
  const Tokenizer& tokenizer = harness_->engine()->tokenizer();
  const int32_t sky = tokenizer.Encode(" sky").at(0);

  nlohmann::json allowed = body;
  allowed["allowed_token_ids"] = {sky};
  const HttpResult only_sky = Post("/v1/chat/completions", allowed);
  ASSERT_EQ(only_sky.status, 200) << only_sky.body;
  std::string skies;
  for (int i = 0; i < 8; ++i) skies += " sky";
  EXPECT_EQ(Content(only_sky), skies);
  EXPECT_EQ(only_sky.json["choices"][0]["finish_reason"], "length");

  // The first token, written without its leading space, is the word to ban.
  std::string word = first;
  word.erase(0, std::min(word.find_first_not_of(' '), word.size()));
  ASSERT_FALSE(word.empty()) << first;
  ASSERT_TRUE(tokenizer.Encode(word) == std::vector<int32_t>{first_id} ||
              tokenizer.Encode(" " + word) == std::vector<int32_t>{first_id})
      << first;
  nlohmann::json banned = body;
  banned["bad_words"] = {word};
  const HttpResult without = Post("/v1/chat/completions", banned);
  ASSERT_EQ(without.status, 200) << without.body;
  for (const nlohmann::json& token : without.json["choices"][0]["logprobs"]["content"]) {
    EXPECT_NE(token["token"], first) << without.body;
  }
  const HttpResult text = Post(
      "/v1/completions",
      {{"prompt", "The sky"}, {"max_tokens", 3}, {"temperature", 0}, {"allowed_token_ids", {sky}}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.json["choices"][0]["text"], " sky sky sky");

  const std::vector<Refusal> bad = {
      {{{"allowed_token_ids", {1, 151936}}},
       "allowed_token_ids[1]",
       "allowed_token_ids[1]: token id 151936 is not in the vocabulary (0 to 151935)"},
      {{{"allowed_token_ids", nlohmann::json::array()}},
       "allowed_token_ids",
       "allowed_token_ids: must list at least one token id (null allows every token)"},
      {{{"allowed_token_ids", {sky}}, {"response_format", {{"type", "json_object"}}}},
       "allowed_token_ids",
       "allowed_token_ids: cannot be combined with response_format, guided decoding or a "
       "forced tool call"},
      {{{"bad_words", {"sky", 3}}}, "bad_words[1]", "bad_words[1]: expected a string, got 3"},
      {{{"bad_words", {" "}}},
       "bad_words[0]",
       "bad_words[0]: must hold a word, not only whitespace"},
  };
  ExpectRefused(Chat, bad);
}

// vLLM's include_stop_str_in_output keeps the stop string that matched, or the text of the
// stop token id that ended the answer, at the answer's end, streamed and not, on both
// OpenAI routes; it was a 400.
TEST_F(ServerAnswerFieldsTest, IncludeStopStrInOutputKeepsTheStop) {
  const nlohmann::json chat = Question(8);
  const HttpResult free = AnswerWithLogprobs();
  ASSERT_EQ(free.status, 200) << free.body;
  const std::string answer = Content(free);
  const nlohmann::json& tokens = free.json["choices"][0]["logprobs"]["content"];
  const auto [k, before] = FirstNewToken(tokens);
  ASSERT_LT(k, tokens.size()) << free.body;
  const std::string stop = tokens[k]["token"];
  const nlohmann::json text = RawQuestion();

  // The answer's text to `body` on `path`, not streamed and streamed (which must agree).
  auto answer_to = [](const std::string& path, nlohmann::json body) {
    const HttpResult plain = Post(path, body);
    EXPECT_EQ(plain.status, 200) << plain.body;
    if (plain.status != 200) return std::string();
    const nlohmann::json& choice = plain.json["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "stop") << plain.body;
    const std::string got = choice.contains("message")
                                ? choice["message"]["content"].get<std::string>()
                                : choice["text"].get<std::string>();
    body["stream"] = true;
    const HttpResult streamed = Post(path, body);
    EXPECT_EQ(streamed.status, 200) << streamed.body;
    std::string pieces;
    for (const nlohmann::json& e : SseEvents(streamed.body)) {
      if (!e.is_object() || !e.contains("choices") || e["choices"].empty()) continue;
      const nlohmann::json& c = e["choices"][0];
      // The last chunk's delta has no content.
      const nlohmann::json piece = c.contains("delta")
                                       ? c["delta"].value("content", nlohmann::json())
                                       : c.value("text", nlohmann::json());
      if (piece.is_string()) pieces += piece.get<std::string>();
    }
    EXPECT_EQ(pieces, got) << streamed.body;
    return got;
  };
  for (const auto& [path, body] :
       {std::pair("/v1/chat/completions", chat), std::pair("/v1/completions", text)}) {
    SCOPED_TRACE(path);
    nlohmann::json stopped = body;
    stopped["stop"] = {"\x01never", stop};
    EXPECT_EQ(answer_to(path, stopped), before);
    stopped["include_stop_str_in_output"] = true;
    EXPECT_EQ(answer_to(path, stopped), before + stop);
    nlohmann::json by_token = body;
    by_token["stop_token_ids"] = {IdOfBytes(stop)};
    by_token["include_stop_str_in_output"] = true;
    EXPECT_EQ(answer_to(path, by_token), before + stop);
  }
  ASSERT_EQ(answer.rfind(before + stop, 0), 0u) << answer;

  const HttpResult wrong = Post("/v1/chat/completions", [&] {
    nlohmann::json body = chat;
    body["include_stop_str_in_output"] = "yes";
    return body;
  }());
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  EXPECT_EQ(wrong.json["error"]["param"], "include_stop_str_in_output") << wrong.body;
}

}  // namespace
}  // namespace qvl::testing
