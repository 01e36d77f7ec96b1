// Requests as the clients of the servers qvl replaces send them (editors' completion
// plugins, vLLM's and llama-server's own fields, Ollama's older clients), over HTTP with
// the tiny model. Each test holds what a probe with such a client found: a 400 for a
// request those servers answer, or a field silently dropped although it changes the
// answer.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "base/mapped_file.h"
#include "chat_question.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerClientCompatTest : public SharedServerTest {
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
  static std::string ImageUrl() {
    return DataUrl(std::string(QVL_TEST_DATA) +
                   "/tiny-qwen3vl/cases/03_two_images/images/first.png");
  }
  // `text` with `line_break` after every 76 characters, as MIME writes base64.
  static std::string Wrapped(const std::string& text, const std::string& line_break) {
    std::string out;
    for (size_t i = 0; i < text.size(); i += 76) out += text.substr(i, 76) + line_break;
    return out;
  }
};

// Editors' code-completion templates (Continue's for Qwen) send about ten stop strings:
// the model's special tokens and a few line patterns. They were a 400 past 4.
TEST_F(ServerClientCompatTest, StopListsAsEditorsSendThemAreTaken) {
  nlohmann::json body = Question(8);
  body["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", body);
  ASSERT_EQ(free.status, 200) << free.body;
  const std::string answer = Content(free);
  const std::string stop = free.json["choices"][0]["logprobs"]["content"][2]["token"];
  ASSERT_NE(answer.find(stop), std::string::npos);

  std::vector<std::string> stops = {"<|endoftext|>",  "<|fim_prefix|>", "<|fim_middle|>",
                                    "<|fim_suffix|>", "<|fim_pad|>",    "<|repo_name|>",
                                    "<|file_sep|>",   "<|im_start|>",   "\n\n\n"};
  stops.push_back(stop);
  body["stop"] = stops;
  const HttpResult stopped = Post("/v1/chat/completions", body);
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(Content(stopped), answer.substr(0, answer.find(stop)));
  EXPECT_EQ(stopped.json["choices"][0]["finish_reason"], "stop");

  body["stop"] = std::vector<std::string>(17, "x");
  const HttpResult many = Post("/v1/chat/completions", body);
  EXPECT_EQ(many.status, 400);
  EXPECT_EQ(many.json["error"]["message"], "stop: at most 16 stop strings are supported, got 17");
}

// Base64 wrapped in lines (Python's base64.encodebytes, the base64 tool, Java's MIME
// encoder) is the same image, as Ollama and vLLM take it; it was a 400.
TEST_F(ServerClientCompatTest, Base64WrappedInLinesIsTheSameImage) {
  const std::string url = ImageUrl();
  const size_t comma = url.find(',') + 1;
  auto ask = [&](const std::string& image_url) {
    nlohmann::json body = Question(3);
    body["messages"][0]["content"] = {{{"type", "image_url"}, {"image_url", {{"url", image_url}}}},
                                      {{"type", "text"}, {"text", "What is this?"}}};
    return Post("/v1/chat/completions", body);
  };
  const HttpResult plain = ask(url);
  ASSERT_EQ(plain.status, 200) << plain.body;
  const HttpResult wrapped = ask(url.substr(0, comma) + Wrapped(url.substr(comma), "\n"));
  ASSERT_EQ(wrapped.status, 200) << wrapped.body;
  EXPECT_EQ(Content(wrapped), Content(plain));
  EXPECT_EQ(wrapped.json["usage"]["prompt_tokens"], plain.json["usage"]["prompt_tokens"]);

  auto ask_ollama = [&](const std::string& image) {
    const nlohmann::json body = {
        {"model", "qwen3-vl"},
        {"stream", false},
        {"options", {{"num_predict", 3}, {"temperature", 0}}},
        {"messages", {{{"role", "user"}, {"content", "What is this?"}, {"images", {image}}}}}};
    return Post("/api/chat", body);
  };
  const HttpResult ollama_plain = ask_ollama(url.substr(comma));
  ASSERT_EQ(ollama_plain.status, 200) << ollama_plain.body;
  const HttpResult ollama_wrapped = ask_ollama(Wrapped(url.substr(comma), "\r\n"));
  ASSERT_EQ(ollama_wrapped.status, 200) << ollama_wrapped.body;
  EXPECT_EQ(ollama_wrapped.json["message"]["content"], ollama_plain.json["message"]["content"]);
}

// llama-server's n_predict is the answer's length on both OpenAI routes; it was ignored
// and the answer ran to the server's default of 2048 tokens.
TEST_F(ServerClientCompatTest, NPredictIsTheTokenLimit) {
  nlohmann::json body = Question(0);
  body.erase("max_tokens");
  body["n_predict"] = 2;
  const HttpResult chat = Post("/v1/chat/completions", body);
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json["usage"]["completion_tokens"], 2);
  EXPECT_EQ(chat.json["choices"][0]["finish_reason"], "length");

  body["max_tokens"] = 3;  // OpenAI's name for the same limit wins
  EXPECT_EQ(Post("/v1/chat/completions", body).json["usage"]["completion_tokens"], 3);

  const HttpResult text =
      Post("/v1/completions", {{"prompt", "The sky"}, {"n_predict", 5}, {"temperature", 0}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.json["usage"]["completion_tokens"], 5);

  body["n_predict"] = 0;
  body.erase("max_tokens");
  const HttpResult zero = Post("/v1/chat/completions", body);
  EXPECT_EQ(zero.status, 400);
  EXPECT_EQ(zero.json["error"]["param"], "n_predict");
}

// vLLM's stop_token_ids end the answer on any id listed, without its text, and its
// min_tokens holds the answer's ends back until it has that many tokens; both were 400s
// (stop_token_ids unless they were the model's own end tokens).
TEST_F(ServerClientCompatTest, StopTokenIdsAndMinTokensShapeTheAnswer) {
  nlohmann::json body = Question(8);
  body["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", body);
  ASSERT_EQ(free.status, 200) << free.body;
  const nlohmann::json& tokens = free.json["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(tokens.size(), 8u);
  // The first token unlike every one before it (the tiny model repeats itself), and the
  // text before it.
  size_t k = 1;
  std::string before = tokens[0]["token"];
  while (k < tokens.size() &&
         before.find(tokens[k]["token"].get<std::string>()) != std::string::npos) {
    before += tokens[k++]["token"].get<std::string>();
  }
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
TEST_F(ServerClientCompatTest, StopReasonNamesTheStopThatEndedTheAnswer) {
  nlohmann::json chat = Question(8);
  chat["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", chat);
  ASSERT_EQ(free.status, 200) << free.body;
  chat.erase("logprobs");
  const std::string answer = Content(free);
  const std::string stop = free.json["choices"][0]["logprobs"]["content"][2]["token"];
  ASSERT_NE(answer.find(stop), std::string::npos);
  const int32_t id = IdOfBytes(stop);
  // The same conversation as a raw prompt gives the same answer on /v1/completions.
  const nlohmann::json text = {
      {"prompt", "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n"},
      {"max_tokens", 8},
      {"temperature", 0}};
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
TEST_F(ServerClientCompatTest, LlamaServersOtherSamplersShapeTheAnswer) {
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
TEST_F(ServerClientCompatTest, AllowedTokenIdsAndBadWordsBindTheAnswer) {
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
TEST_F(ServerClientCompatTest, IncludeStopStrInOutputKeepsTheStop) {
  nlohmann::json chat = Question(8);
  chat["logprobs"] = true;
  const HttpResult free = Post("/v1/chat/completions", chat);
  ASSERT_EQ(free.status, 200) << free.body;
  chat.erase("logprobs");
  const std::string answer = Content(free);
  const nlohmann::json& tokens = free.json["choices"][0]["logprobs"]["content"];
  // The first token unlike every one before it (the tiny model repeats itself), and the
  // text up to it.
  size_t k = 1;
  std::string before = tokens[0]["token"];
  while (k < tokens.size() &&
         before.find(tokens[k]["token"].get<std::string>()) != std::string::npos) {
    before += tokens[k++]["token"].get<std::string>();
  }
  ASSERT_LT(k, tokens.size()) << free.body;
  const std::string stop = tokens[k]["token"];
  const nlohmann::json text = {
      {"prompt", "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n"},
      {"max_tokens", 8},
      {"temperature", 0}};

  // The answer's text to `body` on `path`, not streamed and streamed (which must agree).
  auto answer_to = [](const std::string& path, nlohmann::json body) {
    const HttpResult plain = Post(path, body);
    EXPECT_EQ(plain.status, 200) << plain.body;
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
      const nlohmann::json& piece = c.contains("delta") ? c["delta"]["content"] : c["text"];
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

// vLLM's and llama-server's fields that would change the answer and that qvl cannot
// honour are a 400 naming them; they were silently ignored. At their neutral values they
// are taken.
TEST_F(ServerClientCompatTest, AnswerChangingFieldsOfOtherServersAreRefusedByName) {
  const std::vector<std::pair<std::string, nlohmann::json>> refused = {
      {"use_beam_search", true},           {"truncate_prompt_tokens", 10},
      {"add_generation_prompt", false},    {"echo", true},
      {"chat_template", "{{ messages }}"},
  };
  for (const auto& [key, value] : refused) {
    nlohmann::json body = Question(2);
    body[key] = value;
    const HttpResult r = Post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 400) << key << ": " << r.body;
    EXPECT_EQ(r.json["error"]["param"], key) << r.body;
  }
  nlohmann::json tag = Question(2);
  tag["structured_outputs"] = {{"structural_tag", "{}"}};
  EXPECT_EQ(Post("/v1/chat/completions", tag).json["error"]["param"],
            "structured_outputs.structural_tag");
  nlohmann::json thinking = Question(2);
  thinking["chat_template_kwargs"] = {{"enable_thinking", true}};
  const HttpResult instruct = Post("/v1/chat/completions", thinking);
  EXPECT_EQ(instruct.status, 400);
  EXPECT_EQ(instruct.json["error"]["message"],
            "chat_template_kwargs.enable_thinking: this model does not think (a Qwen3-VL "
            "Instruct model)");
  const HttpResult text = Post(
      "/v1/completions", {{"prompt", "The sky"}, {"max_tokens", 2}, {"use_beam_search", true}});
  EXPECT_EQ(text.status, 400);
  EXPECT_EQ(text.json["error"]["param"], "use_beam_search");

  const int end = harness_->engine()->tokenizer().TokenToId("<|im_end|>");
  nlohmann::json neutral = Question(2);
  neutral["stop_token_ids"] = {end};
  neutral["min_tokens"] = 0;
  neutral["include_stop_str_in_output"] = false;
  neutral["continue_final_message"] = false;
  neutral["add_generation_prompt"] = true;
  neutral["echo"] = false;
  neutral["chat_template_kwargs"] = {{"enable_thinking", false}};
  neutral["skip_special_tokens"] = true;
  neutral["tools"] = nlohmann::json::array();
  neutral["tool_choice"] = "auto";
  const HttpResult taken = Post("/v1/chat/completions", neutral);
  ASSERT_EQ(taken.status, 200) << taken.body;
  EXPECT_EQ(Content(taken), Content(Post("/v1/chat/completions", Question(2))));
}

// Options of older Ollama runners, which its older clients still send, were a 400.
TEST_F(ServerClientCompatTest, OlderOllamaOptionsAreTaken) {
  const nlohmann::json body = {
      {"model", "qwen3-vl"},
      {"stream", false},
      {"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
      {"options", {{"num_predict", 2}, {"num_gqa", 8}, {"f16_kv", true}, {"logits_all", false}}}};
  const HttpResult r = Post("/api/chat", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["eval_count"], 2);
}

// A page on another origin using the openai SDK's helpers (chat.completions.stream and
// .parse, runTools, responses.stream) sends X-Stainless-Helper-Method: the preflight must
// allow every header the SDK sends, or the browser blocks the request.
TEST_F(ServerClientCompatTest, ThePreflightAllowsEveryHeaderTheOpenAiSdkSends) {
  const std::vector<std::string> sdk_headers = {"Authorization",
                                                "Content-Type",
                                                "X-Stainless-Lang",
                                                "X-Stainless-Arch",
                                                "X-Stainless-OS",
                                                "X-Stainless-Runtime",
                                                "X-Stainless-Runtime-Version",
                                                "X-Stainless-Package-Version",
                                                "X-Stainless-Retry-Count",
                                                "X-Stainless-Timeout",
                                                "X-Stainless-Helper-Method"};
  httplib::Client client = harness_->Client();
  const httplib::Result preflight = client.Options(
      "/v1/chat/completions",
      {{"Origin", "http://example.test"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(preflight);
  const std::string allowed = preflight->get_header_value("Access-Control-Allow-Headers");
  for (const std::string& header : sdk_headers) {
    EXPECT_NE(allowed.find(header), std::string::npos) << header;
  }
}

// llama-server also answers without /v1, so clients given the server's address as their
// base URL (Open WebUI, LiteLLM, editor plugins set up for it) call /chat/completions and
// /models: they were 404s.
TEST_F(ServerClientCompatTest, LlamaServersPathsWithoutV1AreServed) {
  const HttpResult versioned = Post("/v1/chat/completions", Question(3));
  ASSERT_EQ(versioned.status, 200) << versioned.body;
  const HttpResult bare = Post("/chat/completions", Question(3));
  ASSERT_EQ(bare.status, 200) << bare.body;
  EXPECT_EQ(Content(bare), Content(versioned));
  const HttpResult text =
      Post("/completions", {{"prompt", "The sky"}, {"max_tokens", 2}, {"temperature", 0}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.json["object"], "text_completion");
  const HttpResult models = Get(*harness_, "/models");
  ASSERT_EQ(models.status, 200) << models.body;
  EXPECT_EQ(models.json, Get(*harness_, "/v1/models").json);
  EXPECT_EQ(Get(*harness_, "/v1/health").json["status"], "ok");
  const HttpResult wrong_method = Get(*harness_, "/chat/completions");
  EXPECT_EQ(wrong_method.status, 405);
  // Counted under their route's label.
  const std::string counted = "route=\"/v1/models\",code=\"200\"} 2";
  EXPECT_NE(MetricsHolding(*harness_, counted).find(counted), std::string::npos);
}

// HTTP's authentication scheme is case-insensitive: "bearer KEY" was a 401.
TEST(ServerClientCompatAuthTest, TheBearerSchemeIsCaseInsensitive) {
  HarnessOptions options = DefaultHarnessOptions();
  options.server.api_key = "s3cret-key";
  ServerHarness harness(options);
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    const HttpResult r =
        Get(harness, "/v1/models", {{"Authorization", std::string(scheme) + " s3cret-key"}});
    EXPECT_EQ(r.status, 200) << scheme << ": " << r.body;
  }
  EXPECT_EQ(Get(harness, "/v1/models", {{"Authorization", "bearer s3cret-kex"}}).status, 401);
  EXPECT_EQ(Get(harness, "/v1/models", {{"Authorization", "Basic s3cret-key"}}).status, 401);
}

// The tiny model with the Thinking template, as server_thinking_test serves it.
using ServerClientCompatThinkingTest = SuiteServerTest<TinyThinkingModel>;

// Ollama takes a think level ("high") for a model without levels as true; it was a 400.
// chat_template_kwargs.enable_thinking (vLLM's switch for Qwen3) must say the model
// thinks, as Ollama's think must: false cannot be honoured.
TEST_F(ServerClientCompatThinkingTest, AThinkLevelAndEnableThinkingSayTheModelThinks) {
  const nlohmann::json messages = {{{"role", "user"}, {"content", "Why is the sky blue?"}}};
  const HttpResult ollama = Post("/api/chat", {{"model", "qwen3-vl"},
                                               {"messages", messages},
                                               {"stream", false},
                                               {"think", "high"},
                                               {"options", {{"num_predict", 2}}}});
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_TRUE(ollama.json["message"]["thinking"].is_string()) << ollama.body;

  nlohmann::json chat = {{"messages", messages}, {"max_tokens", 2}};
  chat["chat_template_kwargs"] = {{"enable_thinking", true}};
  const HttpResult thinks = Post("/v1/chat/completions", chat);
  ASSERT_EQ(thinks.status, 200) << thinks.body;
  EXPECT_TRUE(thinks.json["choices"][0]["message"]["reasoning_content"].is_string());
  chat["chat_template_kwargs"] = {{"enable_thinking", false}};
  const HttpResult refused = Post("/v1/chat/completions", chat);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.json["error"]["param"], "chat_template_kwargs.enable_thinking");
}

// On a Thinking model a choice or a regex binds the reply after "</think>" (here the
// first token, favoured by logit_bias), as a schema does.
TEST_F(ServerClientCompatThinkingTest, AChoiceOrARegexBindsTheReplyAfterTheReasoning) {
  const int think_end = harness_->engine()->tokenizer().TokenToId("</think>");
  nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
                         {"max_tokens", 16},
                         {"temperature", 0},
                         {"logit_bias", {{std::to_string(think_end), 100}}}};
  body["guided_choice"] = {"yes", "no"};
  const HttpResult choice = Post("/v1/chat/completions", body);
  ASSERT_EQ(choice.status, 200) << choice.body;
  const nlohmann::json& message = choice.json["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "") << choice.body;
  EXPECT_TRUE(message["content"] == "yes" || message["content"] == "no") << choice.body;

  body.erase("guided_choice");
  body["guided_regex"] = "[0-9]{2}";
  const HttpResult regex = Post("/v1/chat/completions", body);
  ASSERT_EQ(regex.status, 200) << regex.body;
  EXPECT_TRUE(std::regex_match(regex.json["choices"][0]["message"]["content"].get<std::string>(),
                               std::regex("[0-9]{2}")))
      << regex.body;
}

}  // namespace
}  // namespace qvl::testing
