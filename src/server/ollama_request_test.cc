#include "server/ollama_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "responses_test_fixture.h"
#include "server/chat_request_policy_for_test.h"
#include "server/reasoning_effort.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

using ::qvl::testing::Base64;
using ::qvl::testing::Describe;
using ::qvl::testing::kCases;
using ::qvl::testing::PhotoDataUrl;
using ::qvl::testing::ReadFile;

const std::string& PhotoBase64() {
  static const std::string b64 = Base64(ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg"));
  return b64;
}

// Written by hand so that key order is the client's, not nlohmann's sorted one.
constexpr char kTool[] =
    R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now",)"
    R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}},)"
    R"( "required": ["city"]}}})";

nlohmann::json Chat(nlohmann::json messages) {
  return {{"model", "qwen3-vl"}, {"messages", std::move(messages)}};
}
nlohmann::json Hello() { return Chat({{{"role", "user"}, {"content", "Hello"}}}); }
nlohmann::json WithOptions(nlohmann::json options) {
  nlohmann::json body = Hello();
  body["options"] = std::move(options);
  return body;
}
nlohmann::json Generate(const std::string& prompt) {
  return {{"model", "qwen3-vl"}, {"prompt", prompt}};
}

class OllamaRequestTest : public ::testing::Test {
 protected:
  OllamaRequest ParseChat(const nlohmann::json& body) {
    return ParseOllamaChat(body.dump(), policy_);
  }
  OllamaRequest ParseGen(const nlohmann::json& body) {
    return ParseOllamaGenerate(body.dump(), policy_);
  }
  ChatRequest ParseOpenAi(const std::string& text) { return ParseChatRequest(text, policy_); }

  // The message of the FieldError the body raises on /api/chat (or /api/generate); checks
  // its code and field.
  std::string ErrorOf(const std::string& text, const std::string& field,
                      ErrorCode code = ErrorCode::kInvalidArgument, bool generate = false) {
    try {
      if (generate) {
        ParseOllamaGenerate(text, policy_);
      } else {
        ParseOllamaChat(text, policy_);
      }
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      return e.what();
    }
    return "no error";
  }
  std::string ErrorOf(const nlohmann::json& body, const std::string& field,
                      ErrorCode code = ErrorCode::kInvalidArgument) {
    return ErrorOf(body.dump(), field, code);
  }
  std::string GenerateErrorOf(const nlohmann::json& body, const std::string& field) {
    return ErrorOf(body.dump(), field, ErrorCode::kInvalidArgument, true);
  }

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

TEST_F(OllamaRequestTest, StringContentStreamsByDefault) {
  const OllamaRequest r = ParseChat(Hello());
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_TRUE(r.stream);
  EXPECT_FALSE(r.parse_tool_calls);
  EXPECT_EQ(Describe(r.generation.messages), "user string: [Hello]\n");
  EXPECT_EQ(r.generation.max_tokens, 0);
  EXPECT_EQ(r.generation.grammar, nullptr);
  nlohmann::json body = Hello();
  body["stream"] = false;
  body["keep_alive"] = "5m";
  body["think"] = false;
  EXPECT_FALSE(ParseChat(body).stream);
  body["keep_alive"] = 300;
  EXPECT_FALSE(ParseChat(body).stream);
}

TEST_F(OllamaRequestTest, ModelTagLatestIsTheServedName) {
  nlohmann::json body = Hello();
  body["model"] = "qwen3-vl:latest";
  EXPECT_EQ(ParseChat(body).model, "qwen3-vl:latest");
  body["model"] = "qwen3-vl:7b";
  EXPECT_NE(ErrorOf(body, "model", ErrorCode::kNotFound).find("qwen3-vl:7b"), std::string::npos);
  body["model"] = "llama3";
  ErrorOf(body, "model", ErrorCode::kNotFound);
  body.erase("model");
  ErrorOf(body, "model");
}

TEST_F(OllamaRequestTest, ShowNamesTheModelUnderEitherKey) {
  EXPECT_EQ(OllamaModelName(R"({"model": "qwen3-vl:latest"})", policy_.model_names),
            "qwen3-vl:latest");
  EXPECT_EQ(OllamaModelName(R"({"name": "qwen3-vl"})", policy_.model_names), "qwen3-vl");
  try {
    OllamaModelName(R"({"model": "llama3"})", policy_.model_names);
    ADD_FAILURE() << "llama3 is not served";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(e.field(), "model");
  }
}

TEST_F(OllamaRequestTest, ThinkingIsRefused) {
  nlohmann::json body = Hello();
  body["think"] = true;
  EXPECT_EQ(ErrorOf(body, "think"),
            "think: this model does not think; leave think out or set it to false");
  body["think"] = "high";
  EXPECT_EQ(ErrorOf(body, "think"),
            "think: this model does not think; leave think out or set it to false");
  body["think"] = "maybe";
  EXPECT_EQ(ErrorOf(body, "think"),
            "think: \"maybe\" is not one of true, false, low, medium, high");
}

// Ollama's logprobs and top_logprobs (0 to 20, read only with logprobs).
TEST_F(OllamaRequestTest, LogprobsAskForTheAnswersTokenLogprobs) {
  nlohmann::json body = Hello();
  EXPECT_EQ(ParseOllamaChat(body.dump(), policy_).generation.top_logprobs, -1);
  body["top_logprobs"] = 3;
  EXPECT_EQ(ParseOllamaChat(body.dump(), policy_).generation.top_logprobs, -1);
  body["logprobs"] = true;
  EXPECT_EQ(ParseOllamaChat(body.dump(), policy_).generation.top_logprobs, 3);
  body.erase("top_logprobs");
  EXPECT_EQ(ParseOllamaChat(body.dump(), policy_).generation.top_logprobs, 0);
  body["top_logprobs"] = 21;
  EXPECT_EQ(ErrorOf(body, "top_logprobs"), "top_logprobs: must be between 0 and 20, got 21");
  body["top_logprobs"] = 2;
  body["logprobs"] = "yes";
  EXPECT_EQ(ErrorOf(body, "logprobs"), "logprobs: expected true or false, got string");
}

// A Qwen3-VL Thinking model always opens its reasoning: think false cannot be honoured. A
// level is a thinking budget (reasoning_effort.h); true leaves it to the server. Only
// Ollama's levels are taken.
TEST_F(OllamaRequestTest, AThinkingModelTakesThinkTrueOrALevelAndRefusesFalse) {
  policy_.chat_template = ChatTemplateKind::kThinking;
  nlohmann::json body = Hello();
  const std::pair<nlohmann::json, int> budgets[] = {
      {true, -1}, {"low", 1024}, {"medium", 4096}, {"high", kUncappedReasoningBudget}};
  for (const auto& [think, budget] : budgets) {
    body["think"] = think;
    const OllamaRequest chat = ParseChat(body);
    EXPECT_EQ(Describe(chat.generation.messages), "user string: [Hello]\n") << think;
    EXPECT_EQ(chat.generation.reasoning_budget, budget) << think;
    nlohmann::json generate = Generate("Hi");
    generate["think"] = think;
    EXPECT_EQ(ParseGen(generate).generation.reasoning_budget, budget) << think;
  }
  body.erase("think");
  EXPECT_EQ(ParseChat(body).generation.reasoning_budget, -1);
  for (const char* level : {"maybe", "none", "minimal", "xhigh"}) {
    body["think"] = level;
    EXPECT_EQ(ErrorOf(body, "think"),
              std::string("think: \"") + level + "\" is not one of true, false, low, medium, high");
  }
  body["think"] = 1;
  EXPECT_EQ(ErrorOf(body, "think"),
            "think: expected true, false or one of low, medium, high, got integer");
  body["think"] = false;
  const std::string expected =
      "think: this model always thinks (a Qwen3-VL Thinking model: its chat template opens the "
      "reasoning, which comes in \"thinking\"); leave think out or set it to true or a level";
  EXPECT_EQ(ErrorOf(body, "think"), expected);
  nlohmann::json generate = Generate("Hi");
  generate["think"] = false;
  EXPECT_EQ(ErrorOf(generate.dump(), "think", ErrorCode::kInvalidArgument, true), expected);
}

// An earlier answer's "thinking" is that assistant message's reasoning.
TEST_F(OllamaRequestTest, AnAssistantsThinkingIsItsReasoning) {
  const OllamaRequest r = ParseChat(
      Chat({{{"role", "user"}, {"content", "Why?"}},
            {{"role", "assistant"}, {"content", "Blue."}, {"thinking", "Light scatters."}},
            {{"role", "user"}, {"content", "And?"}}}));
  ASSERT_EQ(r.generation.messages.size(), 3u);
  EXPECT_EQ(r.generation.messages[1].reasoning, "Light scatters.");
  EXPECT_EQ(r.generation.messages[0].reasoning, std::nullopt);
  EXPECT_EQ(ErrorOf(Chat({{{"role", "user"}, {"content", "Why?"}, {"thinking", "x"}}}),
                    "messages[0].thinking"),
            "messages[0].thinking: is only for assistant messages");
}

// Ollama's prefill: a final assistant message with text is continued.
TEST_F(OllamaRequestTest, AFinalAssistantMessageWithTextIsContinued) {
  nlohmann::json body = Chat({{{"role", "user"}, {"content", "Why?"}},
                              {{"role", "assistant"}, {"content", "Because</think> light"}}});
  const GenerationRequest& g = ParseChat(body).generation;
  EXPECT_TRUE(g.continue_final_message);
  EXPECT_FALSE(g.add_generation_prompt);
  EXPECT_EQ(RenderContinuedChat(g.messages),
            "<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\nBecause</think> light");
  body["format"] = "json";
  EXPECT_EQ(ErrorOf(body.dump(), "format"),
            "format: a grammar (response_format, Ollama's format, guided decoding or a forced "
            "tool call) cannot bind an answer that continues the final assistant message: it "
            "would bind the continuation alone, not the message it continues");
  body.erase("format");
  // The Thinking template would write the text before "</think>" as reasoning.
  policy_.chat_template = ChatTemplateKind::kThinking;
  body["think"] = true;
  EXPECT_EQ(ErrorOf(body.dump(), "messages").rfind("messages: messages[1]: the chat template", 0),
            0u);
  // Without text, or with tool calls, the assistant's turn is answered anew.
  body["messages"][1]["content"] = "";
  EXPECT_FALSE(ParseChat(body).generation.continue_final_message);
  body["messages"][1] = {
      {"role", "assistant"},
      {"content", "Let me see."},
      {"tool_calls", {{{"function", {{"name", "f"}, {"arguments", nlohmann::json::object()}}}}}}};
  EXPECT_TRUE(ParseChat(body).generation.add_generation_prompt);
}

TEST_F(OllamaRequestTest, ImagesComeBeforeTheTextAsInTheOpenAiRequest) {
  const nlohmann::json body = Chat({{{"role", "user"},
                                     {"content", "What is this?"},
                                     {"images", {PhotoBase64(), PhotoDataUrl()}}}});
  const OllamaRequest r = ParseChat(body);
  ASSERT_EQ(r.generation.images.size(), 2u);
  EXPECT_EQ(r.generation.images[0].field, "messages[0].images[0]");
  EXPECT_EQ(r.generation.images[1].field, "messages[0].images[1]");
  EXPECT_EQ(r.generation.images[0].bytes, r.generation.images[1].bytes);
  EXPECT_EQ(r.generation.images[0].bytes.size(),
            ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg").size());
  const nlohmann::json openai = {
      {"messages",
       {{{"role", "user"},
         {"content",
          {{{"type", "image_url"}, {"image_url", {{"url", PhotoDataUrl()}}}},
           {{"type", "image_url"}, {"image_url", {{"url", PhotoDataUrl()}}}},
           {{"type", "text"}, {"text", "What is this?"}}}}}}}};
  const ChatRequest chat = ParseOpenAi(openai.dump());
  EXPECT_EQ(Describe(r.generation.messages), Describe(chat.generation.messages));
  EXPECT_EQ(RenderChatTemplate(r.generation.messages, true, {}),
            RenderChatTemplate(chat.generation.messages, true, {}));
}

TEST_F(OllamaRequestTest, BrokenTooLargeAndMisplacedImagesNameTheirField) {
  const auto with_images = [](nlohmann::json images, const std::string& role = "user") {
    return Chat({{{"role", "user"}, {"content", "hi"}},
                 {{"role", role}, {"content", "look"}, {"images", std::move(images)}}});
  };
  EXPECT_NE(ErrorOf(with_images({PhotoBase64(), "abc!"}), "messages[1].images[1]").find("base64"),
            std::string::npos);
  ErrorOf(with_images({42}), "messages[1].images[0]");
  ErrorOf(with_images("abc"), "messages[1].images");
  ErrorOf(with_images({PhotoBase64()}, "assistant"), "messages[1].images");
  policy_.media.max_image_bytes = 100;
  ErrorOf(with_images({PhotoBase64()}), "messages[1].images[0]", ErrorCode::kTooLarge);
  policy_.media.max_image_bytes = 1 << 24;
  policy_.max_images = 1;
  EXPECT_NE(ErrorOf(with_images({PhotoBase64(), PhotoBase64()}), "messages[1].images[1]")
                .find("too many images"),
            std::string::npos);
}

TEST_F(OllamaRequestTest, EveryOptionIsMappedWithTheOpenAiRange) {
  const OllamaRequest r = ParseChat(WithOptions({{"temperature", 0.5},
                                                 {"top_p", 0.9},
                                                 {"top_k", 40},
                                                 {"min_p", 0.05},
                                                 {"seed", 7},
                                                 {"stop", {"\n\n", "END"}},
                                                 {"num_predict", 128},
                                                 {"repeat_penalty", 1.1},
                                                 {"presence_penalty", 0.5},
                                                 {"frequency_penalty", -0.5},
                                                 {"num_ctx", 8192},
                                                 {"num_thread", 4},
                                                 {"use_mmap", true}}));
  const SamplingParams& s = r.generation.sampling;
  EXPECT_FLOAT_EQ(*s.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*s.top_p, 0.9f);
  EXPECT_EQ(*s.top_k, 40);
  EXPECT_FLOAT_EQ(*s.min_p, 0.05f);
  EXPECT_EQ(*s.seed, 7u);
  EXPECT_EQ(r.generation.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(r.generation.max_tokens, 128);
  EXPECT_EQ(r.generation.max_tokens_field, "options.num_predict");
  EXPECT_FLOAT_EQ(*s.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(*s.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(*s.frequency_penalty, -0.5f);

  EXPECT_EQ(ErrorOf(WithOptions({{"temperature", 3}}), "options.temperature"),
            "options.temperature: must be between 0 and 2, got 3");
  ErrorOf(WithOptions({{"top_p", 0}}), "options.top_p");
  ErrorOf(WithOptions({{"top_k", -2}}), "options.top_k");
  ErrorOf(WithOptions({{"min_p", 2}}), "options.min_p");
  ErrorOf(WithOptions({{"seed", 1.5}}), "options.seed");
  ErrorOf(WithOptions({{"repeat_penalty", 0}}), "options.repeat_penalty");
  ErrorOf(WithOptions({{"presence_penalty", 3}}), "options.presence_penalty");
  ErrorOf(WithOptions({{"frequency_penalty", -3}}), "options.frequency_penalty");
  ErrorOf(WithOptions({{"stop", {""}}}), "options.stop[0]");
  ErrorOf(WithOptions({{"stop", {"a", "b", "c", "d", "e"}}}), "options.stop");
  ErrorOf(WithOptions({{"num_ctx", "big"}}), "options.num_ctx");
  ErrorOf(WithOptions({{"low_vram", 1}}), "options.low_vram");
  ErrorOf(WithOptions(42), "options");
}

TEST_F(OllamaRequestTest, NumPredictMinusOneAndMinusTwoAreTheDefault) {
  for (const int n : {-1, -2}) {
    const OllamaRequest r = ParseChat(WithOptions({{"num_predict", n}}));
    EXPECT_EQ(r.generation.max_tokens, 0) << n;
    EXPECT_EQ(r.generation.max_tokens_field, "max_tokens") << n;
  }
  EXPECT_EQ(ErrorOf(WithOptions({{"num_predict", 0}}), "options.num_predict"),
            "options.num_predict: must be -1, -2 or between 1 and 1048576, got 0");
  ErrorOf(WithOptions({{"num_predict", -3}}), "options.num_predict");
  ErrorOf(WithOptions({{"num_predict", 1 << 21}}), "options.num_predict");
}

TEST_F(OllamaRequestTest, UnsupportedSamplingOnlyAtItsNeutralValue) {
  const OllamaRequest neutral = ParseChat(WithOptions({{"mirostat", 0},
                                                       {"mirostat_tau", 5.0},
                                                       {"mirostat_eta", 0.1},
                                                       {"typical_p", 1},
                                                       {"tfs_z", 1.0},
                                                       {"penalize_newline", false},
                                                       {"repeat_last_n", 64}}));
  EXPECT_FALSE(neutral.generation.sampling.repetition_penalty.has_value());
  const SamplingParams mirostat =
      ParseChat(WithOptions({{"mirostat", 1}, {"mirostat_tau", 3.0}, {"mirostat_eta", 0.5}}))
          .generation.sampling;
  EXPECT_EQ(mirostat.mirostat, 1);
  EXPECT_EQ(mirostat.mirostat_tau, 3.0f);
  EXPECT_EQ(mirostat.mirostat_eta, 0.5f);
  EXPECT_EQ(ErrorOf(WithOptions({{"mirostat", 3}}), "options.mirostat"),
            "options.mirostat: must be between 0 and 2, got 3");
  EXPECT_EQ(ParseChat(WithOptions({{"typical_p", 0.9}})).generation.sampling.typical_p, 0.9f);
  EXPECT_EQ(ErrorOf(WithOptions({{"typical_p", 1.5}}), "options.typical_p"),
            "options.typical_p: must be between 0 and 1, got 1.5");
  ErrorOf(WithOptions({{"tfs_z", 0.5}}), "options.tfs_z");
  ErrorOf(WithOptions({{"penalize_newline", true}}), "options.penalize_newline");
  ParseChat(WithOptions({{"f16_kv", nullptr}, {"mirostat", nullptr}}));
  EXPECT_EQ(ErrorOf(WithOptions({{"numa_nodes", 2}}), "options.numa_nodes"),
            "options.numa_nodes: unknown option \"numa_nodes\"");
}

// Older Ollama's runner options, which clients written for it still send (a probe with
// them was a 400): they set how a runner used the machine, and today's Ollama ignores them.
TEST_F(OllamaRequestTest, OlderOllamasRuntimeOptionsAreAccepted) {
  ParseChat(WithOptions(
      {{"num_gqa", 8}, {"f16_kv", true}, {"logits_all", false}, {"embedding_only", false}}));
  ErrorOf(WithOptions({{"f16_kv", 1}}), "options.f16_kv");
}

TEST_F(OllamaRequestTest, RepeatWindowMatchesWhatTheSamplerDoes) {
  // -1 (the whole context) is what qvl's penalties look at.
  const OllamaRequest whole =
      ParseChat(WithOptions({{"repeat_penalty", 1.2}, {"repeat_last_n", -1}}));
  EXPECT_FLOAT_EQ(*whole.generation.sampling.repetition_penalty, 1.2f);
  // 0 turns the penalties off.
  const OllamaRequest off = ParseChat(
      WithOptions({{"repeat_penalty", 1.2}, {"presence_penalty", 1}, {"repeat_last_n", 0}}));
  EXPECT_FLOAT_EQ(*off.generation.sampling.repetition_penalty, 1.0f);
  EXPECT_FLOAT_EQ(*off.generation.sampling.presence_penalty, 0.0f);
  EXPECT_FLOAT_EQ(*off.generation.sampling.frequency_penalty, 0.0f);
  // A window of N tokens is only the same when no penalty is active.
  ParseChat(WithOptions({{"repeat_penalty", 1}, {"repeat_last_n", 64}}));
  ErrorOf(WithOptions({{"repeat_penalty", 1.2}, {"repeat_last_n", 64}}), "options.repeat_last_n");
  ErrorOf(WithOptions({{"frequency_penalty", 0.5}, {"repeat_last_n", 64}}),
          "options.repeat_last_n");
  ErrorOf(WithOptions({{"repeat_last_n", -2}}), "options.repeat_last_n");
}

TEST_F(OllamaRequestTest, FormatJsonAndSchemaCompileAsChatsResponseFormat) {
  nlohmann::json body = Hello();
  body["format"] = "json";
  const ChatRequest json_object = ParseOpenAi(
      R"({"messages": [{"role": "user", "content": "Hello"}], "response_format": {"type": "json_object"}})");
  EXPECT_EQ(ParseChat(body).generation.grammar, json_object.generation.grammar);
  ASSERT_NE(json_object.generation.grammar, nullptr);
  body["format"] = "";
  EXPECT_EQ(ParseChat(body).generation.grammar, nullptr);

  const std::string schema =
      R"({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}})";
  const OllamaRequest r = ParseOllamaChat(
      R"({"model": "qwen3-vl", "messages": [{"role": "user", "content": "Hi"}], "format": )" +
          schema + "}",
      policy_);
  const ChatRequest chat = ParseOpenAi(
      R"({"messages": [{"role": "user", "content": "Hi"}], "response_format": {"type": )"
      R"("json_schema", "json_schema": {"name": "x", "schema": )" +
      schema + "}}}");
  ASSERT_NE(r.generation.grammar, nullptr);
  EXPECT_EQ(r.generation.grammar, chat.generation.grammar);  // same cached compilation

  body["format"] = {{"type", "object"}, {"properties", {{"x", {{"type", "nonsense"}}}}}};
  EXPECT_EQ(ErrorOf(body, "format.properties.x.type").rfind("format.properties.x.type: ", 0), 0u);
  body["format"] = "xml";
  ErrorOf(body, "format");
  body["format"] = 3;
  ErrorOf(body, "format");
}

TEST_F(OllamaRequestTest, ToolsGiveTheSamePromptAsChatsAutoTools) {
  const std::string messages = R"([{"role": "user", "content": "Weather in Paris?"}])";
  const OllamaRequest r = ParseOllamaChat(
      R"({"model": "qwen3-vl", "messages": )" + messages + R"(, "tools": [)" + kTool + "]}",
      policy_);
  const ChatRequest chat =
      ParseOpenAi(R"({"messages": )" + messages + R"(, "tools": [)" + kTool + "]}");
  EXPECT_TRUE(r.parse_tool_calls);
  ASSERT_EQ(r.generation.tools_json.size(), 1u);
  EXPECT_EQ(r.generation.tools_json, chat.generation.tools_json);
  EXPECT_EQ(r.generation.grammar, nullptr);  // "auto": free text or a call
  EXPECT_EQ(RenderChatTemplate(r.generation.messages, true, r.generation.tools_json),
            RenderChatTemplate(chat.generation.messages, true, chat.generation.tools_json));
  ErrorOf(R"({"model": "qwen3-vl", "messages": )" + messages +
              R"(, "tools": [{"type": "function", "function": {"name": "a b"}}]})",
          "tools[0].function.name");
}

TEST_F(OllamaRequestTest, ToolCallHistoryIsChatsMessages) {
  const nlohmann::json ollama = Chat({
      {{"role", "system"}, {"content", "Be brief."}},
      {{"role", "user"}, {"content", "Weather in Paris?"}},
      {{"role", "assistant"},
       {"content", ""},
       {"tool_calls",
        {{{"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}}}}},
      {{"role", "tool"}, {"content", "18 C"}, {"tool_name", "get_weather"}},
  });
  const nlohmann::json openai = {
      {"messages",
       {
           {{"role", "system"}, {"content", "Be brief."}},
           {{"role", "user"}, {"content", "Weather in Paris?"}},
           {{"role", "assistant"},
            {"content", ""},
            {"tool_calls",
             {{{"id", "call_1"},
               {"type", "function"},
               {"function", {{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}}}}}},
           {{"role", "tool"}, {"content", "18 C"}, {"tool_call_id", "call_1"}},
       }}};
  const OllamaRequest r = ParseChat(ollama);
  const ChatRequest chat = ParseOpenAi(openai.dump());
  EXPECT_EQ(Describe(r.generation.messages), Describe(chat.generation.messages));
  EXPECT_EQ(RenderChatTemplate(r.generation.messages, true, {}),
            RenderChatTemplate(chat.generation.messages, true, {}));

  // An assistant turn with calls and no content, in both APIs.
  const OllamaRequest no_content = ParseChat(
      Chat({{{"role", "user"}, {"content", "Weather?"}},
            {{"role", "assistant"}, {"tool_calls", {{{"function", {{"name", "get_weather"}}}}}}}}));
  const ChatRequest chat_no_content = ParseOpenAi(
      R"({"messages": [{"role": "user", "content": "Weather?"}, {"role": "assistant", )"
      R"("tool_calls": [{"id": "c", "type": "function", "function": {"name": "get_weather"}}]}]})");
  EXPECT_EQ(Describe(no_content.generation.messages),
            Describe(chat_no_content.generation.messages));
  EXPECT_EQ(RenderChatTemplate(no_content.generation.messages, true, {}),
            RenderChatTemplate(chat_no_content.generation.messages, true, {}));

  nlohmann::json late_system = Hello();
  late_system["messages"].push_back({{"role", "system"}, {"content", "x"}});
  EXPECT_EQ(ErrorOf(late_system, "messages[1].role"),
            "messages[1].role: a system message must be the first message");
  ErrorOf(Chat({{{"role", "user"},
                 {"content", "x"},
                 {"tool_calls", {{{"function", {{"name", "f"}}}}}}}}),
          "messages[0].tool_calls");
  ErrorOf(Chat({{{"role", "user"}}}), "messages[0].content");
  ErrorOf(Chat({{{"role", "user"}, {"content", {1}}}}), "messages[0].content");
  ErrorOf(Chat(nlohmann::json::array()), "messages");
}

TEST_F(OllamaRequestTest, GenerateIsASystemAndAUserMessage) {
  nlohmann::json body = Generate("Describe it.");
  body["system"] = "Be brief.";
  body["images"] = {PhotoBase64()};
  const OllamaRequest r = ParseGen(body);
  EXPECT_TRUE(r.stream);
  EXPECT_FALSE(r.generation.prompt_text.has_value());
  EXPECT_EQ(Describe(r.generation.messages),
            "system string: [Be brief.]\nuser parts: [image] [Describe it.]\n");
  ASSERT_EQ(r.generation.images.size(), 1u);
  EXPECT_EQ(r.generation.images[0].field, "images[0]");
  body["images"] = {"@@@"};
  GenerateErrorOf(body, "images[0]");
  EXPECT_EQ(Describe(ParseGen(Generate("Hi")).generation.messages), "user string: [Hi]\n");
  GenerateErrorOf(Generate(""), "prompt");
  GenerateErrorOf({{"model", "qwen3-vl"}}, "prompt");
}

TEST_F(OllamaRequestTest, GenerateRawSendsThePromptAsIs) {
  nlohmann::json body = Generate("<|im_start|>user\nHi<|im_end|>\n");
  body["raw"] = true;
  body["options"] = {{"num_predict", -1}};
  const OllamaRequest r = ParseGen(body);
  ASSERT_TRUE(r.generation.prompt_text.has_value());
  EXPECT_EQ(*r.generation.prompt_text, "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_TRUE(r.generation.messages.empty());
  EXPECT_EQ(r.generation.max_tokens, 0);
  body["images"] = {PhotoBase64()};
  GenerateErrorOf(body, "images");
  body.erase("images");
  body["system"] = "x";
  GenerateErrorOf(body, "system");
}

TEST_F(OllamaRequestTest, GenerateRefusesWhatItCannotHonour) {
  nlohmann::json body = Generate("def f(");
  body["suffix"] = "    return 1";
  GenerateErrorOf(body, "suffix");
  body["suffix"] = "";
  body["context"] = {1, 2, 3};
  EXPECT_EQ(GenerateErrorOf(body, "context"),
            "context: token contexts are not supported; send the conversation to /api/chat");
  body["context"] = nlohmann::json::array();
  body["template"] = "{{ .Prompt }}";
  GenerateErrorOf(body, "template");
  body.erase("template");
  body["tools"] = nlohmann::json::parse(std::string("[") + kTool + "]");
  GenerateErrorOf(body, "tools");
}

// Ollama's clients load a model with a request that asks nothing.
TEST_F(OllamaRequestTest, RequestsWithNothingToAnswerOnlyLoad) {
  EXPECT_TRUE(ParseGen({{"model", "qwen3-vl"}}).load_only);
  EXPECT_TRUE(ParseGen(Generate("")).load_only);
  EXPECT_FALSE(ParseGen(Generate("hi")).load_only);
  EXPECT_TRUE(ParseChat({{"model", "qwen3-vl"}}).load_only);
  EXPECT_TRUE(ParseChat({{"model", "qwen3-vl"}, {"messages", nlohmann::json::array()}}).load_only);
  nlohmann::json with_image = Generate("");
  with_image["images"] = {"aGk="};
  EXPECT_EQ(GenerateErrorOf(with_image, "prompt"), "prompt: is required with images");
  // The model is still checked.
  ErrorOf(nlohmann::json{{"model", "llama3"}}, "model", ErrorCode::kNotFound);
}

}  // namespace
}  // namespace qvl
