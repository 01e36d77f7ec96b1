#include "server/responses_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "responses_test_fixture.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

using ::qvl::testing::Body;
using ::qvl::testing::Describe;
using ::qvl::testing::kCases;
using ::qvl::testing::PhotoDataUrl;
using ::qvl::testing::ReadFile;
using ::qvl::testing::ResponsesRequestTest;
using ::qvl::testing::Text;

// Written by hand so that key order is the client's, not nlohmann's sorted one. The same
// tool in both APIs' shapes.
constexpr char kChatTool[] =
    R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now",)"
    R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}},)"
    R"( "required": ["city"]}}})";
constexpr char kFlatTool[] =
    R"({"type": "function", "name": "get_weather", "description": "Weather now",)"
    R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}},)"
    R"( "required": ["city"]}})";

// A Responses body with the flat tool and `extra` members.
std::string WithTool(const std::string& extra) {
  return std::string(R"({"input": "What is the weather in Paris?", "tools": [)") + kFlatTool + "]" +
         extra + "}";
}

TEST_F(ResponsesRequestTest, StringInputIsOneUserMessageAndTheEchoHasDefaults) {
  const ResponsesRequest r = Parse(Body("Hello"));
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.logprobs);
  EXPECT_FALSE(r.parse_tool_calls);
  EXPECT_EQ(Describe(r.generation.messages), "user string: [Hello]\n");
  EXPECT_EQ(r.generation.max_tokens, 0);
  EXPECT_EQ(r.generation.top_logprobs, -1);
  EXPECT_EQ(r.generation.grammar, nullptr);
  EXPECT_EQ(r.echo.dump(),
            R"({"instructions":null,"max_output_tokens":null,"temperature":null,"top_p":null,)"
            R"("top_logprobs":0,"tools":[],"tool_choice":"auto","parallel_tool_calls":true,)"
            R"("text":{"format":{"type":"text"}},"truncation":"disabled","metadata":{},)"
            R"("store":false,"user":null,"reasoning":{"effort":null,"summary":null},)"
            R"("previous_response_id":null})");
}
// llama-server's return_progress, as on chat: asked of the engine for a streamed request
// only (the encoder writes qvl.prompt_progress events); a wrong type names the field.
TEST_F(ResponsesRequestTest, ReturnProgressAsksForProgressWhenStreamed) {
  nlohmann::json body = Body("hi");
  EXPECT_FALSE(Parse(body).generation.report_progress);
  body["return_progress"] = true;
  EXPECT_FALSE(Parse(body).return_progress);
  EXPECT_FALSE(Parse(body).generation.report_progress);
  body["return_progress"] = "yes";
  EXPECT_EQ(ErrorOf(body, "return_progress"),
            "return_progress: expected true or false, got string");
  body["return_progress"] = true;
  body["stream"] = true;
  EXPECT_TRUE(Parse(body).return_progress);
  EXPECT_TRUE(Parse(body).generation.report_progress);
  EXPECT_FALSE(Parse(body).echo.contains("return_progress"));
}

TEST_F(ResponsesRequestTest, TextFormatCompilesTheSchemaItCarries) {
  const std::string schema =
      R"({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}})";
  const std::string format =
      R"({"type": "json_schema", "name": "answer", "strict": true, "schema": )" + schema + "}";
  const ResponsesRequest r =
      ParseRaw(R"({"input": "hi", "text": {"format": )" + format + R"(, "verbosity": "low"}})");
  ASSERT_NE(r.generation.grammar, nullptr);
  EXPECT_EQ(r.echo["text"].dump(), R"({"format":{"type":"json_schema","name":"answer","strict":)"
                                   R"(true,"schema":{"type":"object","properties":{"b":{"type":)"
                                   R"("string"},"a":{"type":"integer"}}}},"verbosity":"low"})");
  // The same schema through chat is the same compiled grammar.
  const ChatRequest chat =
      ParseChat(R"({"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": )"
                R"("json_schema", "json_schema": {"name": "answer", "schema": )" +
                schema + "}}}");
  EXPECT_EQ(r.generation.grammar, chat.generation.grammar);
  EXPECT_NE(Parse({{"input", "hi"}, {"text", {{"format", {{"type", "json_object"}}}}}})
                .generation.grammar,
            nullptr);

  auto with_format = [](nlohmann::json f) {
    return nlohmann::json{{"input", "hi"}, {"text", {{"format", std::move(f)}}}};
  };
  EXPECT_EQ(ErrorOf(with_format(
                        {{"type", "json_schema"},
                         {"name", "a"},
                         {"schema",
                          {{"type", "object"},
                           {"properties", {{"x", {{"type", "string"}, {"pattern", "(?=a)"}}}}}}}}),
                    "text.format.schema.properties.x.pattern")
                .rfind("text.format.schema.properties.x.pattern: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(with_format({{"type", "json_schema"}, {"schema", nlohmann::json::object()}}),
                    "text.format.name"),
            "text.format.name: is required");
  EXPECT_EQ(ErrorOf(with_format({{"type", "json_schema"}, {"name", "a"}}), "text.format.schema"),
            "text.format.schema: is required when type is \"json_schema\"");
  EXPECT_EQ(ErrorOf(with_format({{"type", "xml"}}), "text.format.type"),
            "text.format.type: \"xml\" is not one of text, json_object, json_schema");
  EXPECT_EQ(ErrorOf({{"input", "hi"}, {"text", {{"verbosity", "max"}}}}, "text.verbosity"),
            "text.verbosity: \"max\" is not one of low, medium, high");
  EXPECT_EQ(
      ErrorOf({{"input", "hi"}, {"response_format", {{"type", "json_object"}}}}, "response_format"),
      "response_format: use text.format");
}

TEST_F(ResponsesRequestTest, FlatToolsGiveTheChatPromptAndGrammar) {
  const ResponsesRequest r = ParseRaw(WithTool(R"(, "tool_choice": "required")"));
  const ChatRequest chat =
      ParseChat(std::string(R"({"messages": [{"role": "user", "content": "What is the weather in )"
                            R"(Paris?"}], "tool_choice": "required", "tools": [)") +
                kChatTool + "]}");
  EXPECT_TRUE(r.parse_tool_calls);
  ASSERT_EQ(r.generation.tools_json.size(), 1u);
  EXPECT_EQ(r.generation.tools_json, chat.generation.tools_json);
  EXPECT_EQ(r.generation.tools_json[0], kChatTool);
  ASSERT_NE(r.generation.grammar, nullptr);
  EXPECT_EQ(r.generation.grammar, chat.generation.grammar);
  EXPECT_EQ(RenderChatTemplate(r.generation.messages, true, r.generation.tools_json),
            RenderChatTemplate(chat.generation.messages, true, chat.generation.tools_json));
  EXPECT_EQ(r.echo["tools"][0].dump(),
            nlohmann::ordered_json::parse(kFlatTool).dump());  // the client's key order
  EXPECT_EQ(r.echo["tool_choice"], "required");

  const ResponsesRequest automatic = ParseRaw(WithTool(""));
  EXPECT_TRUE(automatic.parse_tool_calls);
  EXPECT_EQ(automatic.generation.grammar, nullptr);
  const ResponsesRequest named =
      ParseRaw(WithTool(R"(, "tool_choice": {"type": "function", "name": "get_weather"})"));
  EXPECT_NE(named.generation.grammar, nullptr);
  EXPECT_NE(named.generation.grammar, r.generation.grammar);
  const ResponsesRequest none =
      ParseRaw(WithTool(R"(, "tool_choice": "none", "parallel_tool_calls": false)"));
  EXPECT_FALSE(none.parse_tool_calls);
  EXPECT_TRUE(none.generation.tools_json.empty());
  EXPECT_EQ(none.echo["parallel_tool_calls"], false);

  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": {"type": "function", "name": "f"})"),
                       "tool_choice.name"),
            "tool_choice.name: \"f\" is not one of the tools");
  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": {"type": "allowed_tools", "tools": []})"),
                       "tool_choice.type"),
            "tool_choice.type: \"allowed_tools\" is not supported; use none, auto, required, or "
            "{\"type\": \"function\", \"name\": ...}");
  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": "sometimes")"), "tool_choice"),
            "tool_choice: \"sometimes\" is not one of none, auto, required, or {\"type\": "
            "\"function\", \"name\": ...}");
  EXPECT_EQ(
      RawErrorOf(R"({"input": "hi", "tools": [{"type": "web_search_preview"}]})", "tools[0].type"),
      "tools[0].type: \"web_search_preview\" is not supported; only \"function\" tools are");
  EXPECT_EQ(RawErrorOf(R"({"input": "hi", "tools": [{"type": "function", "name": "a b"}]})",
                       "tools[0].name"),
            "tools[0].name: must be 1 to 64 letters, digits, '_', '-' or '.', got \"a b\"");
  EXPECT_EQ(RawErrorOf(R"({"input": "hi", "tools": [{"type": "function", "name": "f", )"
                       R"("parameters": {"type": "integer", "multipleOf": 3}}]})",
                       "tools[0].parameters.multipleOf")
                .rfind("tools[0].parameters.multipleOf: ", 0),
            0u);
}

TEST_F(ResponsesRequestTest, GenerationFieldsAndTheTokenLimit) {
  nlohmann::json body = Body("hi");
  body.update({{"stream", true},
               {"stream_options", {{"include_obfuscation", false}}},
               {"max_output_tokens", 7},
               {"temperature", 0.5},
               {"top_p", 0.9},
               {"top_k", 20},
               {"seed", 3},
               {"stop", "END"},
               {"ignore_eos", true},
               {"max_image_tokens", 256}});
  const ResponsesRequest r = Parse(body);
  const GenerationRequest& g = r.generation;
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(g.max_tokens, 7);
  EXPECT_EQ(g.max_tokens_field, "max_output_tokens");
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(*g.sampling.top_k, 20);
  EXPECT_EQ(*g.sampling.seed, 3u);
  EXPECT_EQ(g.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(g.ignore_eos);
  EXPECT_EQ(g.image_budget.max_pixels, 256 * 1024);
  EXPECT_EQ(r.echo["max_output_tokens"], 7);
  EXPECT_EQ(r.echo["temperature"], 0.5);
  EXPECT_EQ(r.echo["top_p"], 0.9);

  body["max_output_tokens"] = 0;
  EXPECT_EQ(ErrorOf(body, "max_output_tokens"),
            "max_output_tokens: must be between 1 and 1048576, got 0");
  body["max_output_tokens"] = 7;
  body["temperature"] = 3;
  EXPECT_EQ(ErrorOf(body, "temperature"), "temperature: must be between 0 and 2, got 3");
  body["temperature"] = 1;
  body["max_tokens"] = 7;
  EXPECT_EQ(ErrorOf(body, "max_tokens"), "max_tokens: use max_output_tokens");
  body.erase("max_tokens");
  body["max_completion_tokens"] = 7;
  EXPECT_EQ(ErrorOf(body, "max_completion_tokens"), "max_completion_tokens: use max_output_tokens");
}

TEST_F(ResponsesRequestTest, IncludeAndTopLogprobs) {
  nlohmann::json body = Body("hi");
  body["include"] = {"message.output_text.logprobs", "reasoning.encrypted_content"};
  body["top_logprobs"] = 3;
  ResponsesRequest r = Parse(body);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.generation.top_logprobs, 3);
  EXPECT_EQ(r.echo["top_logprobs"], 3);
  body.erase("top_logprobs");
  r = Parse(body);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.generation.top_logprobs, 0);
  body["include"] = {"web_search_call.action.sources", "message.input_image.image_url"};
  body["top_logprobs"] = 5;
  r = Parse(body);
  EXPECT_FALSE(r.logprobs);
  EXPECT_EQ(r.generation.top_logprobs, -1);  // as OpenAI: no logprobs without the include
  EXPECT_EQ(r.echo["top_logprobs"], 5);

  body["top_logprobs"] = 21;
  EXPECT_EQ(ErrorOf(body, "top_logprobs"), "top_logprobs: must be between 0 and 20, got 21");
  body["top_logprobs"] = 2;
  body["include"] = {"message.output_text.logprobs", "message.output_text.tokens"};
  EXPECT_EQ(ErrorOf(body, "include[1]"),
            "include[1]: \"message.output_text.tokens\" is not something qvl can include; it "
            "includes message.output_text.logprobs");
  body["include"] = {7};
  EXPECT_EQ(ErrorOf(body, "include[0]"), "include[0]: expected a string, got integer");
  body.erase("include");
  body["logprobs"] = true;
  EXPECT_EQ(ErrorOf(body, "logprobs"),
            "logprobs: use include: [\"message.output_text.logprobs\"] (and top_logprobs)");
}

TEST_F(ResponsesRequestTest, StoredStateAndUnsupportedFeaturesAreRefused) {
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json body = Body("hi");
    body[key] = std::move(value);
    return body;
  };
  EXPECT_EQ(ErrorOf(with("previous_response_id", "resp_1"), "previous_response_id"),
            "previous_response_id: this server keeps no responses (--response-store-mb 0); send "
            "the earlier turns in input (the server's prefix cache reuses their work)");
  EXPECT_FALSE(Parse(Body("hi")).store);
  EXPECT_EQ(ErrorOf(with("conversation", "conv_1"), "conversation"),
            "conversation: the Conversations API is not supported; continue a stored response "
            "with previous_response_id, or send the earlier turns in input");
  EXPECT_EQ(ErrorOf(with("background", true), "background"),
            "background: is not supported: qvl answers while the request waits; stream to "
            "follow a long answer");
  EXPECT_EQ(Parse(with("background", false)).generation.messages.size(), 1u);
  EXPECT_EQ(ErrorOf(with("prompt", {{"id", "pmpt_1"}}), "prompt"),
            "prompt: stored prompt templates are not supported; send instructions and input");
  EXPECT_EQ(ErrorOf(with("n", 2), "n"),
            "n: the Responses API has one answer per request; use /v1/chat/completions for n");
  EXPECT_EQ(ErrorOf(with("truncation", "auto"), "truncation"),
            "truncation: \"auto\" is not supported: qvl never drops earlier turns (nor cuts "
            "through an image); send what fits the context");
  EXPECT_EQ(Parse(with("truncation", "disabled")).echo["truncation"], "disabled");
  EXPECT_EQ(ErrorOf(with("model", "gpt-4o"), "model", ErrorCode::kNotFound).rfind("model: ", 0),
            0u);
}

TEST_F(ResponsesRequestTest, AStoredConversationGoesBeforeTheInput) {
  // As the route keeps it: the earlier input, then the answer's output items.
  const nlohmann::json earlier = {{{"role", "developer"}, {"content", "Be brief."}},
                                  {{"role", "user"}, {"content", "Name a colour."}},
                                  {{"id", "msg_1"},
                                   {"type", "message"},
                                   {"status", "completed"},
                                   {"role", "assistant"},
                                   {"content",
                                    {{{"type", "output_text"},
                                      {"text", "Red."},
                                      {"annotations", nlohmann::json::array()},
                                      {"logprobs", nlohmann::json::array()}}}}}};
  std::string asked;
  stored_ = [&](const std::string& id) -> std::optional<std::string> {
    asked = id;
    if (id != "resp_1") return std::nullopt;
    return earlier.dump();
  };
  nlohmann::json body = Body("Another?");
  body["instructions"] = "Answer in French.";
  body["previous_response_id"] = "resp_1";
  const ResponsesRequest r = Parse(body);
  EXPECT_EQ(asked, "resp_1");
  EXPECT_EQ(Describe(r.generation.messages),
            "system string: [Answer in French.\n\nBe brief.]\n"
            "user string: [Name a colour.]\n"
            "assistant parts: [Red.]\n"
            "user string: [Another?]\n");
  EXPECT_TRUE(r.store);
  nlohmann::json conversation = earlier;
  conversation.push_back({{"role", "user"}, {"content", "Another?"}});
  EXPECT_EQ(r.conversation, conversation);
  EXPECT_EQ(r.echo["store"], true);
  EXPECT_EQ(r.echo["previous_response_id"], "resp_1");
  EXPECT_EQ(r.echo["instructions"], "Answer in French.");

  body["store"] = false;
  EXPECT_FALSE(Parse(body).store);
  EXPECT_EQ(Parse(body).echo["store"], false);
  body["previous_response_id"] = "resp_2";
  EXPECT_EQ(ErrorOf(body, "previous_response_id"),
            "previous_response_id: no stored response \"resp_2\": it was never stored (store: "
            "false), was deleted, or the server's store (--response-store-mb) no longer holds it; "
            "send the earlier turns in input");
  // A stored item that no longer reads names where it sits.
  stored_ = [](const std::string&) -> std::optional<std::string> {
    return R"([{"role": "user", "content": [{"type": "input_audio"}]}])";
  };
  EXPECT_NE(ErrorOf(body, "previous_response_id[0].content[0].type"), "no error");
}

// The summary asked for is echoed (the encoder gives the reasoning as it); a value OpenAI
// does not have is a 400, as is any with the deprecated name.
TEST_F(ResponsesRequestTest, AReasoningSummaryIsEchoedAndChecked) {
  nlohmann::json body = Body("hi");
  EXPECT_EQ(Parse(body).echo["reasoning"].dump(), R"({"effort":null,"summary":null})");
  body["reasoning"] = {{"effort", "high"}, {"summary", nullptr}};
  EXPECT_EQ(Parse(body).echo["reasoning"].dump(), R"({"effort":null,"summary":null})");
  body["reasoning"] = {{"generate_summary", "detailed"}};
  EXPECT_EQ(Parse(body).echo["reasoning"].dump(), R"({"effort":null,"summary":"detailed"})");
  body["reasoning"] = {{"summary", "short"}};
  EXPECT_EQ(ErrorOf(body, "reasoning.summary"),
            "reasoning.summary: \"short\" is not one of auto, concise, detailed");
  body["reasoning"] = {{"generate_summary", "none"}};
  EXPECT_EQ(ErrorOf(body, "reasoning.generate_summary"),
            "reasoning.generate_summary: \"none\" is not one of auto, concise, detailed");
  body["reasoning"] = {{"summary", true}};
  EXPECT_EQ(ErrorOf(body, "reasoning.summary"),
            "reasoning.summary: expected a string, got boolean");
  body["reasoning"] = "auto";
  EXPECT_EQ(ErrorOf(body, "reasoning"), "reasoning: expected an object, got string");
}

// reasoning.effort is a thinking budget (reasoning_effort.h), echoed on a Thinking model;
// a model that does not reason ignores it, so there the echo says null.
TEST_F(ResponsesRequestTest, AReasoningEffortIsAThinkingBudget) {
  nlohmann::json body = Body("hi");
  EXPECT_EQ(Parse(body).generation.reasoning_budget, -1);
  body["reasoning"] = {{"effort", "low"}};
  EXPECT_EQ(Parse(body).generation.reasoning_budget, 1024);
  policy_.chat_template = ChatTemplateKind::kThinking;
  const std::pair<const char*, int> budgets[] = {
      {"none", 0}, {"minimal", 256}, {"medium", 4096}, {"xhigh", 1 << 20}};
  for (const auto& [level, budget] : budgets) {
    body["reasoning"] = {{"effort", level}};
    const ResponsesRequest r = Parse(body);
    EXPECT_EQ(r.generation.reasoning_budget, budget) << level;
    EXPECT_EQ(r.echo["reasoning"]["effort"], level);
  }
  body["reasoning"] = {{"effort", "max"}, {"summary", "auto"}};
  EXPECT_EQ(ErrorOf(body, "reasoning.effort"),
            "reasoning.effort: \"max\" is not one of none, minimal, low, medium, high, xhigh");
}

TEST_F(ResponsesRequestTest, EchoRepeatsTheSettingsAsSent) {
  nlohmann::json body = Body("hi");
  body.update({{"instructions", "Be brief."},
               {"store", true},
               {"user", "u1"},
               {"safety_identifier", "s"},
               {"prompt_cache_key", "k"},
               {"service_tier", "auto"},
               {"reasoning", {{"effort", "low"}, {"summary", "auto"}}},
               {"metadata", {{"team", "vision"}}},
               {"tool_choice", "none"}});
  const ResponsesRequest r = Parse(body);
  EXPECT_EQ(r.echo["instructions"], "Be brief.");
  EXPECT_EQ(r.echo["store"], false);  // this server keeps no responses
  EXPECT_EQ(r.echo["user"], "u1");
  EXPECT_EQ(r.echo["metadata"].dump(), R"({"team":"vision"})");
  EXPECT_EQ(r.echo["tool_choice"], "none");
  EXPECT_EQ(r.echo["reasoning"].dump(), R"({"effort":null,"summary":"auto"})");

  nlohmann::json metadata = nlohmann::json::object();
  for (int i = 0; i < 17; ++i) metadata[StrCat("k", i)] = "v";
  body["metadata"] = metadata;
  EXPECT_EQ(ErrorOf(body, "metadata"), "metadata: at most 16 keys are allowed, got 17");
  body["metadata"] = {{std::string(65, 'k'), "v"}};
  EXPECT_EQ(ErrorOf(body, "metadata." + std::string(65, 'k')),
            "metadata." + std::string(65, 'k') + ": keys can be at most 64 characters long");
  body["metadata"] = {{"k", std::string(513, 'v')}};
  EXPECT_EQ(ErrorOf(body, "metadata.k"), "metadata.k: values can be at most 512 characters long");
  body["metadata"] = {{"k", 1}};
  EXPECT_EQ(ErrorOf(body, "metadata.k"), "metadata.k: expected a string, got integer");
  body["metadata"] = {{"k", "v"}};
  body["store"] = "yes";
  EXPECT_EQ(ErrorOf(body, "store"), "store: expected true or false, got string");
}
}  // namespace
}  // namespace qvl
