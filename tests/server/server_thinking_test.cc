// A Qwen3-VL Thinking model over HTTP: the tiny fixture model with the Thinking chat
// template (tests/data/qwen3vl-thinking) in place of its Instruct one. Its random
// weights never write "</think>" by themselves, so the tests force it with logit_bias
// where they need a reply after the reasoning (a grammar then masks the tag again).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/bf16.h"
#include "base/mapped_file.h"
#include "engine/request_preparer.h"
#include "grammar/schema_validator_for_test.h"
#include "model/model_folder_for_test.h"
#include "model/safetensors.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerThinkingTest : public SuiteServerTest<TinyThinkingModel> {
 public:
  // "</think>" as the served model's tokenizer spells it.
  static int ThinkEnd() { return harness_->engine()->tokenizer().TokenToId("</think>"); }

 protected:
  static nlohmann::json Question(int max_tokens) {
    return {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
            {"max_tokens", max_tokens}};
  }
};

TEST_F(ServerThinkingTest, TheFolderIsServedWithTheThinkingTemplate) {
  EXPECT_EQ(harness_->engine()->preparer().chat_template(), ChatTemplateKind::kThinking);
}

// Cut off by max_tokens before "</think>": all of it is reasoning, and counted so.
TEST_F(ServerThinkingTest, AnAnswerCutOffWhileItReasonsIsAllReasoning) {
  const HttpResult r = Post("/v1/chat/completions", Question(4));
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& message = r.json["choices"][0]["message"];
  EXPECT_EQ(message["content"], "");
  EXPECT_TRUE(message["reasoning_content"].is_string()) << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 4);
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);
}

// vLLM's thinking_token_budget: the reasoning is the first that many tokens of the free
// one, then "</think>" (this model never writes it by itself) and the reply; streamed
// the same. On /v1/completions a raw prompt opens no reasoning, so there is nothing to
// cut. A budget out of range is a 400 naming the field.
TEST_F(ServerThinkingTest, AThinkingTokenBudgetEndsTheReasoningThere) {
  nlohmann::json body = Question(3);
  body["temperature"] = 0;
  const HttpResult free = Post("/v1/chat/completions", body);
  ASSERT_EQ(free.status, 200) << free.body;
  body["max_tokens"] = 7;
  body["thinking_token_budget"] = 3;
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& message = r.json["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], free.json["choices"][0]["message"]["reasoning_content"]);
  EXPECT_TRUE(message["content"].is_string()) << r.body;
  EXPECT_NE(message["content"], "");
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 7);
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(StreamedText(SseEvents(streamed.body)), message["content"]);

  body["max_tokens"] = 3;
  body["stream"] = false;
  body["thinking_token_budget"] = 0;
  const HttpResult none = Post("/v1/chat/completions", body);
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.json["choices"][0]["message"]["reasoning_content"], "");
  EXPECT_EQ(none.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);

  body["thinking_token_budget"] = -1;
  const HttpResult bad = Post("/v1/chat/completions", body);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json["error"]["param"], "thinking_token_budget") << bad.body;
}

// `qvl serve --thinking-budget`: the budget of every request that sets none; a request's
// own thinking_token_budget wins.
TEST(ServerThinkingBudgetTest, TheServersBudgetIsTheDefault) {
  HarnessOptions options = DefaultHarnessOptions();
  options.model_dir = TinyThinkingModel();
  options.engine.default_reasoning_budget = 2;
  const ServerHarness harness(options);
  nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
                         {"max_tokens", 5},
                         {"temperature", 0}};
  HttpResult r = PostJson(harness, "/v1/chat/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
  body["thinking_token_budget"] = 3;
  r = PostJson(harness, "/v1/chat/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);
  const HttpResult props = Get(harness, "/props");
  EXPECT_EQ(props.json["limits"]["default_thinking_token_budget"], 2) << props.body;
}

// "</think>" first: no reasoning; only the first tag ends it, so the rest is the reply.
TEST_F(ServerThinkingTest, TheReplyIsWhatFollowsTheTag) {
  nlohmann::json body = Question(3);
  body["logit_bias"] = {{std::to_string(ServerThinkingTest::ThinkEnd()), 100}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["choices"][0]["message"]["reasoning_content"], "");
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], "</think></think>");
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(StreamedText(SseEvents(streamed.body)), "</think></think>");
}

TEST_F(ServerThinkingTest, OllamaAndResponsesGiveTheReasoningTheirWay) {
  const nlohmann::json messages = Question(2)["messages"];
  const HttpResult o = Post("/api/chat", {{"model", "qwen3-vl"},
                                          {"messages", messages},
                                          {"stream", false},
                                          {"options", {{"num_predict", 2}}}});
  ASSERT_EQ(o.status, 200) << o.body;
  EXPECT_TRUE(o.json["message"]["thinking"].is_string()) << o.body;
  EXPECT_EQ(o.json["message"]["content"], "");

  const HttpResult r =
      Post("/v1/responses", {{"input", "Why is the sky blue?"}, {"max_output_tokens", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json["output"].size(), 1u) << r.body;
  EXPECT_EQ(r.json["output"][0]["type"], "reasoning");
  EXPECT_EQ(r.json["usage"]["output_tokens_details"]["reasoning_tokens"], 2);
}

// The template always opens the reasoning: there is no answer without it.
TEST_F(ServerThinkingTest, OllamasThinkFalseIsA400) {
  const HttpResult o =
      Post("/api/chat",
           {{"model", "qwen3-vl"}, {"messages", Question(2)["messages"]}, {"think", false}});
  EXPECT_EQ(o.status, 400) << o.body;
  EXPECT_NE(o.body.find("this model always thinks"), std::string::npos) << o.body;
}

// Ollama's clients (Open WebUI, the ollama CLI) offer thinking where /api/show lists it.
TEST_F(ServerThinkingTest, OllamasShowListsTheThinkingCapability) {
  const HttpResult show = Post("/api/show", {{"model", "qwen3-vl"}});
  ASSERT_EQ(show.status, 200) << show.body;
  EXPECT_EQ(show.json["capabilities"],
            (nlohmann::json{"completion", "vision", "tools", "thinking"}));
}

const grammar_test::Json kVerdict = grammar_test::Json::parse(R"({
  "type": "object", "additionalProperties": false, "required": ["answer", "score"],
  "properties": {"answer": {"type": "string", "maxLength": 8}, "score": {"type": "integer"}}})");

// Ends the reasoning at once; the grammar binds what follows, so the tag comes once.
// Greedy, so that the streamed answer is the same.
nlohmann::json EndingTheReasoning(nlohmann::json body) {
  body["logit_bias"] = {{std::to_string(ServerThinkingTest::ThinkEnd()), 100}};
  body["temperature"] = 0;
  return body;
}

// The schema binds the reply after "</think>", as vLLM applies it after the reasoning.
TEST_F(ServerThinkingTest, AJsonSchemaBindsTheReplyAfterTheReasoning) {
  nlohmann::json body = EndingTheReasoning(Question(64));
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "verdict"}, {"schema", kVerdict}}}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& message = r.json["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "") << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);
  EXPECT_EQ(r.json["choices"][0]["finish_reason"], "stop") << r.body;
  const std::string content = message["content"];
  const grammar_test::Json reply = grammar_test::Json::parse(content);
  EXPECT_TRUE(grammar_test::Validate(reply, kVerdict, kVerdict)) << content;

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(StreamedText(SseEvents(streamed.body)), content);
}

// Cut off by max_tokens while it reasons: no reply, as without a grammar.
TEST_F(ServerThinkingTest, AJsonObjectCutOffInTheReasoningIsAnEmptyReply) {
  nlohmann::json body = Question(4);
  body["response_format"] = {{"type", "json_object"}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], "");
  EXPECT_TRUE(r.json["choices"][0]["message"]["reasoning_content"].is_string()) << r.body;
  EXPECT_EQ(r.json["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);
}

TEST_F(ServerThinkingTest, ARequiredToolIsCalledAfterTheReasoning) {
  nlohmann::json body = EndingTheReasoning(Question(96));
  body["tools"] = {{{"type", "function"},
                    {"function",
                     {{"name", "get_weather"},
                      {"parameters",
                       {{"type", "object"},
                        {"additionalProperties", false},
                        {"required", {"city"}},
                        {"properties", {{"city", {{"type", "string"}, {"maxLength", 8}}}}}}}}}}};
  body["tool_choice"] = "required";
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& choice = r.json["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls") << r.body;
  EXPECT_EQ(choice["message"]["reasoning_content"], "") << r.body;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << r.body;
  const nlohmann::json& function = choice["message"]["tool_calls"][0]["function"];
  EXPECT_EQ(function["name"], "get_weather");
  const std::string arguments = function["arguments"];
  const nlohmann::json parsed = nlohmann::json::parse(arguments);
  ASSERT_TRUE(parsed.is_object()) << arguments;
  EXPECT_EQ(parsed.size(), 1u) << arguments;
  EXPECT_TRUE(parsed["city"].is_string()) << arguments;

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::string name, streamed_arguments, finish;
  for (const nlohmann::json& e : SseEvents(streamed.body)) {
    if (!e.is_object() || !e.contains("choices") || e["choices"].empty()) continue;
    const nlohmann::json& c = e["choices"][0];
    if (c["finish_reason"].is_string()) finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    for (const nlohmann::json& call : c["delta"]["tool_calls"]) {
      if (call["function"].contains("name")) name += call["function"]["name"].get<std::string>();
      if (call["function"].contains("arguments")) {
        streamed_arguments += call["function"]["arguments"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(name, "get_weather") << streamed.body;
  EXPECT_EQ(streamed_arguments, arguments) << streamed.body;
  EXPECT_EQ(finish, "tool_calls") << streamed.body;
}

// A bias on "</think>" that the greedy tiny model follows only after some reasoning (at
// 100 the tag comes first). It stays on after the tag: without a grammar to mask it, the
// reply holds more tags.
constexpr float kLateThinkEndBias = 4.0f;

nlohmann::json ReasoningThenReply(nlohmann::json body) {
  body["logit_bias"] = {{std::to_string(ServerThinkingTest::ThinkEnd()), kLateThinkEndBias}};
  body["temperature"] = 0;
  return body;
}

// The first or last whole UTF-8 character of `text`.
std::string FirstCharacter(const std::string& text) {
  size_t n = 1;
  while (n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) ++n;
  return text.substr(0, n);
}
std::string LastCharacter(const std::string& text) {
  size_t at = text.size() - 1;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return text.substr(at);
}

// `text` up to the first `stop` in it, as a stop string cuts it.
std::string CutAt(const std::string& text, const std::string& stop) {
  return text.substr(0, text.find(stop));
}

// The reasoning and content deltas of a chat completion stream.
std::pair<std::string, std::string> StreamedParts(const std::string& body) {
  std::string reasoning, content;
  for (const nlohmann::json& e : SseEvents(body)) {
    if (!e.is_object() || !e.contains("choices") || e["choices"].empty()) continue;
    const nlohmann::json& delta = e["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) reasoning += delta["reasoning_content"];
    if (delta.contains("content") && delta["content"].is_string()) content += delta["content"];
  }
  return {reasoning, content};
}

// A stop string meant for the answer cuts the reply (here its last character); text of
// the reasoning (here all of it) does not end it. vLLM issues #14170, #38499, #52393:
// there the reasoning is cut and there is no answer at all.
TEST_F(ServerThinkingTest, StopStringsEndTheReplyNotTheReasoning) {
  nlohmann::json body = ReasoningThenReply(Question(24));
  const HttpResult plain = Post("/v1/chat/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  const std::string reasoning = plain.json["choices"][0]["message"]["reasoning_content"];
  const std::string content = plain.json["choices"][0]["message"]["content"];
  ASSERT_FALSE(reasoning.empty()) << plain.body;
  ASSERT_FALSE(content.empty()) << plain.body;

  for (const std::string& stop : {reasoning, LastCharacter(content)}) {
    SCOPED_TRACE("stop \"" + stop + "\"");
    body["stop"] = {stop};
    body.erase("stream");
    const HttpResult r = Post("/v1/chat/completions", body);
    ASSERT_EQ(r.status, 200) << r.body;
    const nlohmann::json& choice = r.json["choices"][0];
    EXPECT_EQ(choice["message"]["reasoning_content"], reasoning);
    EXPECT_EQ(choice["message"]["content"], CutAt(content, stop));
    EXPECT_EQ(choice["finish_reason"], content.find(stop) != std::string::npos
                                           ? "stop"
                                           : plain.json["choices"][0]["finish_reason"]);

    body["stream"] = true;
    const HttpResult streamed = Post("/v1/chat/completions", body);
    ASSERT_EQ(streamed.status, 200) << streamed.body;
    EXPECT_EQ(StreamedParts(streamed.body), std::make_pair(reasoning, CutAt(content, stop)));
  }
}

std::vector<nlohmann::json> NdjsonLines(const std::string& body) {
  std::vector<nlohmann::json> lines;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find('\n', at);
    if (end == std::string::npos) {
      ADD_FAILURE() << "a line without its newline";
      break;
    }
    lines.push_back(nlohmann::json::parse(body.substr(at, end - at)));
    at = end + 1;
  }
  return lines;
}

nlohmann::json OllamaChat(int num_predict) {
  return {{"model", "qwen3-vl"},
          {"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
          {"stream", false},
          {"options", {{"num_predict", num_predict}, {"temperature", 0}}}};
}

// Ollama's options.stop, as stop: the thinking goes on past it.
TEST_F(ServerThinkingTest, OllamasStopDoesNotEndTheThinking) {
  nlohmann::json body = OllamaChat(8);
  const HttpResult plain = Post("/api/chat", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  const std::string thinking = plain.json["message"]["thinking"];
  ASSERT_FALSE(thinking.empty()) << plain.body;

  body["options"]["stop"] = {FirstCharacter(thinking)};
  const HttpResult r = Post("/api/chat", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["message"]["thinking"], thinking);
  EXPECT_EQ(r.json["message"]["content"], "");
  EXPECT_EQ(r.json["done_reason"], "length");
}

// Ollama's format on a Thinking model: the schema binds the reply, not the thinking,
// which is what the model thinks without a format. Ollama has no logit_bias to bring
// "</think>" from the tiny model, so the answer is cut off while it thinks: no reply.
TEST_F(ServerThinkingTest, OllamasFormatLeavesTheThinkingFree) {
  nlohmann::json body = OllamaChat(6);
  const HttpResult free = Post("/api/chat", body);
  ASSERT_EQ(free.status, 200) << free.body;
  body["format"] = kVerdict;
  const HttpResult r = Post("/api/chat", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["message"]["thinking"], free.json["message"]["thinking"]);
  EXPECT_FALSE(r.json["message"]["thinking"].get<std::string>().empty());
  EXPECT_EQ(r.json["message"]["content"], "");
  EXPECT_EQ(r.json["done_reason"], "length");

  body["stream"] = true;
  const HttpResult streamed = Post("/api/chat", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::string thinking, content;
  for (const nlohmann::json& line : NdjsonLines(streamed.body)) {
    if (line["message"].contains("thinking")) thinking += line["message"]["thinking"];
    if (line["message"].contains("content")) content += line["message"]["content"];
  }
  EXPECT_EQ(thinking, r.json["message"]["thinking"]);
  EXPECT_EQ(content, "");
}

// The tiny Thinking model changed so that it ends its reasoning by itself, for Ollama's
// routes, which have no logit_bias to bring "</think>" from it: the embeddings are tied,
// so with "</think>"'s row made kCloserScale times the row of token kCloser ("利率", which
// its greedy reasoning writes fifth), "</think>"'s logit is that much larger than
// kCloser's, and the greedy model ends its reasoning once kCloser comes near the top
// (after two tokens).
constexpr int kCloser = 102299;
constexpr float kCloserScale = 1.25f;

std::string ThinkingModelThatEndsItsReasoning() {
  const std::string dir = TinyThinkingModel();
  const std::string file = dir + "/model.safetensors";
  std::string weights = ReadFile(file);
  const SafetensorsFile safetensors(file);
  const TensorInfo* embeddings = safetensors.Find("model.language_model.embed_tokens.weight");
  EXPECT_TRUE(embeddings != nullptr && embeddings->dtype == DType::kBF16);
  if (embeddings == nullptr) return dir;
  const int64_t hidden = embeddings->shape[1];
  const size_t table = static_cast<size_t>(embeddings->data - safetensors.mapped().data());
  const int think_end = 151668;  // "</think>" in Qwen3's vocabulary
  for (int64_t i = 0; i < hidden; ++i) {
    uint16_t closer;
    std::memcpy(&closer, weights.data() + table + (kCloser * hidden + i) * 2, 2);
    const uint16_t scaled = F32ToBf16(Bf16ToF32(closer) * kCloserScale);
    std::memcpy(weights.data() + table + (think_end * hidden + i) * 2, &scaled, 2);
  }
  return ModelFolderWith(dir, "model.safetensors", weights);
}

using ServerThinkingReplyTest = SuiteServerTest<ThinkingModelThatEndsItsReasoning>;

// The thinking and the content of an NDJSON stream, and its last line.
struct OllamaStream {
  std::string thinking, content;
  nlohmann::json last;
};
OllamaStream ReadOllamaStream(const std::string& body, const char* text_key) {
  OllamaStream out;
  for (const nlohmann::json& line : NdjsonLines(body)) {
    const nlohmann::json& answer = text_key == nullptr ? line["message"] : line;
    if (answer.contains("thinking")) out.thinking += answer["thinking"];
    const char* key = text_key == nullptr ? "content" : text_key;
    if (answer.contains(key)) out.content += answer[key];
    out.last = line;
  }
  return out;
}

// Ollama's format with think on a Thinking model: the thinking is free text, the same as
// without a format; the content after "</think>" satisfies the schema. Streamed, the same
// thinking and content.
TEST_F(ServerThinkingReplyTest, OllamasFormatBindsTheContentAfterFreeThinking) {
  nlohmann::json body = OllamaChat(64);
  body["think"] = true;
  const HttpResult free = Post("/api/chat", body);
  ASSERT_EQ(free.status, 200) << free.body;
  const std::string thinking = free.json["message"]["thinking"];
  ASSERT_FALSE(thinking.empty()) << free.body;

  body["format"] = kVerdict;
  const HttpResult r = Post("/api/chat", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["message"]["thinking"], thinking);
  EXPECT_FALSE(nlohmann::json::accept(thinking)) << thinking;
  const std::string content = r.json["message"]["content"];
  EXPECT_TRUE(grammar_test::Validate(grammar_test::Json::parse(content), kVerdict, kVerdict))
      << content;
  EXPECT_EQ(r.json["done_reason"], "stop") << r.body;

  body["stream"] = true;
  const HttpResult streamed = Post("/api/chat", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(streamed.content_type, "application/x-ndjson");
  const OllamaStream lines = ReadOllamaStream(streamed.body, nullptr);
  EXPECT_EQ(lines.thinking, thinking);
  EXPECT_EQ(lines.content, content);
  EXPECT_EQ(lines.last["done"], true) << streamed.body;
  EXPECT_EQ(lines.last["done_reason"], "stop") << streamed.body;
}

// /api/generate alike: "thinking" beside "response", which the schema binds.
TEST_F(ServerThinkingReplyTest, OllamasGenerateFormatBindsTheResponseAfterFreeThinking) {
  nlohmann::json body = {
      {"model", "qwen3-vl"}, {"prompt", "Why is the sky blue?"},
      {"think", "high"},     {"format", kVerdict},
      {"stream", false},     {"options", {{"num_predict", 64}, {"temperature", 0}}}};
  const HttpResult r = Post("/api/generate", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string thinking = r.json["thinking"];
  EXPECT_FALSE(thinking.empty()) << r.body;
  const std::string response = r.json["response"];
  EXPECT_TRUE(grammar_test::Validate(grammar_test::Json::parse(response), kVerdict, kVerdict))
      << response;

  body["stream"] = true;
  const HttpResult streamed = Post("/api/generate", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const OllamaStream lines = ReadOllamaStream(streamed.body, "response");
  EXPECT_EQ(lines.thinking, thinking);
  EXPECT_EQ(lines.content, response);
  EXPECT_EQ(lines.last["done_reason"], "stop") << streamed.body;
}

// think: false asks for an answer without reasoning, which this template cannot give: a
// 400 naming think, with a format as without one, streamed or not.
TEST_F(ServerThinkingReplyTest, OllamasThinkFalseWithAFormatIsA400) {
  nlohmann::json body = OllamaChat(64);
  body["think"] = false;
  body["format"] = kVerdict;
  for (const bool stream : {false, true}) {
    body["stream"] = stream;
    const HttpResult r = Post("/api/chat", body);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json["error"].get<std::string>().rfind("think: this model always thinks", 0), 0u)
        << r.body;
  }
}

// The Responses API's text.format: a reasoning item, then a message that the schema
// binds; streamed, the same items.
TEST_F(ServerThinkingTest, ResponsesTextFormatBindsTheMessageAfterTheReasoning) {
  nlohmann::json body = ReasoningThenReply(
      {{"input", "Why is the sky blue?"},
       {"max_output_tokens", 64},
       {"text",
        {{"format", {{"type", "json_schema"}, {"name", "verdict"}, {"schema", kVerdict}}}}}});
  const HttpResult r = Post("/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["status"], "completed") << r.body;
  const nlohmann::json& output = r.json["output"];
  ASSERT_EQ(output.size(), 2u) << r.body;
  EXPECT_EQ(output[0]["type"], "reasoning");
  const std::string reasoning = output[0]["content"][0]["text"];
  EXPECT_FALSE(reasoning.empty());
  EXPECT_EQ(output[1]["type"], "message");
  const std::string text = output[1]["content"][0]["text"];
  EXPECT_TRUE(grammar_test::Validate(grammar_test::Json::parse(text), kVerdict, kVerdict)) << text;
  EXPECT_GT(r.json["usage"]["output_tokens_details"]["reasoning_tokens"], 1);

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/responses", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const std::vector<nlohmann::json> events = SseEvents(streamed.body);
  ASSERT_FALSE(events.empty());
  const nlohmann::json& done = events.back();
  ASSERT_EQ(done["type"], "response.completed") << streamed.body;
  ASSERT_EQ(done["response"]["output"].size(), 2u) << streamed.body;
  EXPECT_EQ(done["response"]["output"][0]["content"][0]["text"], reasoning);
  EXPECT_EQ(done["response"]["output"][1]["content"][0]["text"], text);
}

// reasoning.summary: qvl writes no summary; the reasoning as written is the summary (and
// still the content), streamed once, as summary deltas.
TEST_F(ServerThinkingTest, AResponsesSummaryIsTheReasoningAsWritten) {
  nlohmann::json body = {{"input", "Why is the sky blue?"},
                         {"max_output_tokens", 4},
                         {"temperature", 0},
                         {"reasoning", {{"effort", "low"}, {"summary", "auto"}}}};
  const HttpResult r = Post("/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["reasoning"], (nlohmann::json{{"effort", "low"}, {"summary", "auto"}}));
  ASSERT_EQ(r.json["output"].size(), 1u) << r.body;
  const nlohmann::json& item = r.json["output"][0];
  EXPECT_EQ(item["type"], "reasoning");
  const std::string reasoning = item["content"][0]["text"];
  EXPECT_FALSE(reasoning.empty());
  EXPECT_EQ(item["summary"],
            (nlohmann::json::array({{{"type", "summary_text"}, {"text", reasoning}}})));

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/responses", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::string deltas;
  for (const nlohmann::json& e : SseEvents(streamed.body)) {
    EXPECT_NE(e["type"], "response.reasoning_text.delta");
    if (e["type"] == "response.reasoning_summary_text.delta") deltas += e["delta"];
  }
  EXPECT_EQ(deltas, reasoning);
}

}  // namespace
}  // namespace qvl::testing
