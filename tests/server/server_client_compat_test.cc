// Requests as the clients of the servers qvl replaces send them (editors' completion
// plugins, vLLM's and llama-server's own fields, Ollama's older clients), over HTTP with
// the tiny model (what those fields do to the answer: server_answer_fields_test.cc). Each test
// holds what a probe with such a client found: a 400 for a request those servers answer, or a field
// silently dropped although it changes the answer.
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
