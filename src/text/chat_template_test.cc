// The chat template against the fixture prompts and against goldens rendered by
// transformers' Jinja set-up (jinja2 sandbox, trim_blocks, lstrip_blocks, json.dumps
// tojson) from tests/data/tiny-qwen3vl/model/chat_template.json.
#include "text/chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "text/test_tokenizer.h"

namespace qvl {
namespace {

const std::string kData = QVL_TEST_DATA;

const Tokenizer& Qwen() { return QwenTokenizerForTest(); }

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileToString(path));
}

// OpenAI request messages as the server will map them.
std::vector<ChatMessage> FromRequest(const nlohmann::json& request) {
  std::vector<ChatMessage> messages;
  for (const nlohmann::json& m : request["messages"]) {
    ChatMessage message;
    message.role = m["role"].get<std::string>();
    const nlohmann::json& content = m["content"];
    if (content.is_string()) {
      message.content_is_string = true;
      message.parts.push_back({ChatPart::Kind::kText, content.get<std::string>()});
    } else {
      for (const nlohmann::json& part : content) {
        if (part["type"] == "text") {
          message.parts.push_back({ChatPart::Kind::kText, part["text"].get<std::string>()});
        } else if (part["type"] == "video") {
          message.parts.push_back({ChatPart::Kind::kVideo, ""});
        } else {
          message.parts.push_back({ChatPart::Kind::kImage, ""});
        }
      }
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

ChatMessage Text(std::string role, std::string text) {
  return {std::move(role), {{ChatPart::Kind::kText, std::move(text)}}, true, {}, {}};
}

TEST(ChatTemplateTest, RendersAndTokenizesEveryFixtureCase) {
  size_t cases = 0;
  for (const auto& dir : std::filesystem::directory_iterator(kData + "/tiny-qwen3vl/cases")) {
    SCOPED_TRACE(dir.path().string());
    const nlohmann::json meta = ReadJson(dir.path().string() + "/meta.json");
    const std::string rendered =
        RenderChatTemplate(FromRequest(ReadJson(dir.path().string() + "/request.json")), true);
    EXPECT_EQ(rendered, meta["prompt_text"].get<std::string>());

    std::vector<int> counts;
    for (const nlohmann::json& image : meta.value("images", nlohmann::json::array())) {
      counts.push_back(image["num_image_tokens"].get<int>());
    }
    std::vector<VideoPromptLayout> videos;
    for (const nlohmann::json& video : meta.value("videos", nlohmann::json::array())) {
      videos.push_back(
          {video["timestamps"].get<std::vector<double>>(), video["tokens_per_group"].get<int>()});
    }
    EXPECT_EQ(TokenizePrompt(Qwen(), rendered, counts, videos),
              meta["input_ids"].get<std::vector<int32_t>>());
    ++cases;
  }
  EXPECT_EQ(cases, 8u);
}

// The timestamp text rounds the binary double as printf does (Python's .1f), and each
// group is a vision block of its own.
TEST(ChatTemplateTest, VideoTimestampsAndGroups) {
  const std::vector<ChatMessage> messages = {
      {"user", {{ChatPart::Kind::kVideo, ""}, {ChatPart::Kind::kText, "Why?"}}, false, {}, {}}};
  const std::string rendered = RenderChatTemplate(messages, true);
  EXPECT_EQ(rendered,
            "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Why?<|im_end|>\n"
            "<|im_start|>assistant\n");
  const VideoPromptLayout layout{{0.25, 1.0 / 3, 5.0 / 3, 1.25}, 3};
  const std::vector<int32_t> ids = TokenizePrompt(Qwen(), rendered, {}, {&layout, 1});
  const std::string expanded = Qwen().Decode(ids, false);
  const std::string group = "<|vision_start|><|video_pad|><|video_pad|><|video_pad|><|vision_end|>";
  EXPECT_EQ(expanded, "<|im_start|>user\n<0.2 seconds>" + group + "<0.3 seconds>" + group +
                          "<1.7 seconds>" + group + "<1.2 seconds>" + group +
                          "Why?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151656), 12);

  auto error_of = [&](std::span<const VideoPromptLayout> videos, const std::string& text) {
    try {
      TokenizePrompt(Qwen(), text, {}, videos);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of({}, rendered), "the prompt has more video placeholders than videos (0)");
  const VideoPromptLayout two[] = {layout, layout};
  EXPECT_EQ(error_of(two, rendered), "the prompt has 1 video placeholders but 2 videos");
  EXPECT_EQ(error_of({}, "<|im_start|>user\n<|video_pad|><|im_end|>\n"),
            "the prompt has <|video_pad|> tokens outside the videos' placeholders");
  const std::vector<ChatMessage> in_assistant = {
      {"user", {{ChatPart::Kind::kText, "q"}}, false, {}, {}},
      {"assistant", {{ChatPart::Kind::kVideo, ""}}, false, {}, {}}};
  EXPECT_THROW(RenderChatTemplate(in_assistant, true), Error);
}

// VideoTextTokens is what a video adds to the prompt besides its pad tokens, with one-,
// two- and three-digit seconds: the budget counts it, so it must be exact.
TEST(ChatTemplateTest, VideoTextTokensAreWhatTheVideoAddsBesidesItsPads) {
  const std::string rendered = RenderChatTemplate(
      {{"user", {{ChatPart::Kind::kVideo, ""}, {ChatPart::Kind::kText, "Why?"}}, false, {}, {}}},
      true);
  const std::string without =
      RenderChatTemplate({{"user", {{ChatPart::Kind::kText, "Why?"}}, false, {}, {}}}, true);
  const size_t text = Qwen().Encode(without).size();
  for (const VideoPromptLayout& layout :
       {VideoPromptLayout{{0.25, 1.0 / 3}, 3}, VideoPromptLayout{{9.75, 12.5, 99.96}, 2},
        VideoPromptLayout{{599.5, 123.45, 0}, 5}}) {
    const size_t pads = layout.timestamps.size() * layout.tokens_per_group;
    const int64_t video_text = VideoTextTokens(Qwen(), layout.timestamps);
    EXPECT_EQ(TokenizePrompt(Qwen(), rendered, {}, {&layout, 1}).size(),
              text + pads + static_cast<size_t>(video_text))
        << layout.timestamps[1];
  }
  // "<", "0", ".", "2", " seconds", ">" and the two markers.
  EXPECT_EQ(VideoTextTokens(Qwen(), std::vector<double>{0.25}), 8);
}

TEST(ChatTemplateTest, ToolCallsAndToolResults) {
  ChatMessage system{
      "system",
      {{ChatPart::Kind::kText, "You are terse."}, {ChatPart::Kind::kText, " Answer in English."}},
      false,
      {},
      {}};
  ChatMessage calls = Text("assistant", "");
  calls.tool_calls = {{"get_weather", R"({"city": "Paris"})"},
                      {"get_weather", R"({"city": "Köln"})"}};
  ChatMessage second_result{"tool", {{ChatPart::Kind::kText, "12 C, rain"}}, false, {}, {}};
  ChatMessage question{"user",
                       {{ChatPart::Kind::kText, "And this one?"}, {ChatPart::Kind::kImage, ""}},
                       false,
                       {},
                       {}};
  const std::vector<ChatMessage> messages = {
      system,        Text("user", "Weather in Paris and Köln?"),
      calls,         Text("tool", "18 C, sunny"),
      second_result, question};
  EXPECT_EQ(RenderChatTemplate(messages, true),
            "<|im_start|>system\nYou are terse. Answer in English.<|im_end|>\n<|im_start|>user\n"
            "Weather in Paris and Köln?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": "
            "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n"
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Köln\"}}\n</tool_call>"
            "<|im_end|>\n<|im_start|>user\n<tool_response>\n18 C, sunny\n</tool_response>\n"
            "<tool_response>\n12 C, rain\n</tool_response><|im_end|>\n<|im_start|>user\nAnd this "
            "one?<|vision_start|><|image_pad|><|vision_end|><|im_end|>\n<|im_start|>assistant\n");

  ChatMessage checked = Text("assistant", "Let me check.");
  checked.tool_calls = {{"a", "{}"}, {"b", R"({"x": 1})"}};
  EXPECT_EQ(RenderChatTemplate({Text("user", "q"), checked}, false),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nLet me check.\n<tool_call>\n"
            "{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", "
            "\"arguments\": {\"x\": 1}}\n</tool_call><|im_end|>\n");

  const ChatMessage tool_image{
      "tool", {{ChatPart::Kind::kImage, ""}, {ChatPart::Kind::kText, "chart"}}, false, {}, {}};
  const ChatMessage reply{"assistant", {{ChatPart::Kind::kText, "A chart."}}, false, {}, {}};
  EXPECT_EQ(RenderChatTemplate({tool_image, reply}, true),
            "<|im_start|>user\n<tool_response>\n<|vision_start|><|image_pad|><|vision_end|>chart\n"
            "</tool_response><|im_end|>\n<|im_start|>assistant\nA chart.<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, ToolDefinitionsGoIntoTheSystemTurn) {
  const std::vector<std::string> tools = {
      R"({"type": "function", "function": {"name": "get_weather", "description": "Weather in a )"
      R"(city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, )"
      R"("required": ["city"]}}})"};
  const std::string block =
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are "
      "provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
      tools[0] +
      "\n</tools>\n\nFor each function call, return a json object with function name and "
      "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
      "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";
  EXPECT_EQ(
      RenderChatTemplate({Text("user", "hi")}, true, tools),
      "<|im_start|>system\n" + block + "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(RenderChatTemplate({Text("system", "Be brief."), Text("user", "hi")}, false, tools),
            "<|im_start|>system\nBe brief.\n\n" + block + "<|im_start|>user\nhi<|im_end|>\n");
}

TEST(ChatTemplateTest, DropsASystemMessageThatIsNotFirstLikeTheTemplate) {
  EXPECT_EQ(RenderChatTemplate(
                {Text("user", "one"), Text("system", "ignored"), Text("user", "two")}, true),
            "<|im_start|>user\none<|im_end|>\n<|im_start|>user\ntwo<|im_end|>\n"
            "<|im_start|>assistant\n");
}

std::string RenderError(const std::vector<ChatMessage>& messages) {
  try {
    RenderChatTemplate(messages, true);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(ChatTemplateTest, RefusesWhatTheTemplateCannotRender) {
  EXPECT_EQ(RenderError({}), "messages must not be empty");
  EXPECT_EQ(RenderError({Text("user", "a"), Text("developer", "b")}),
            "messages[1].role \"developer\" is not one of system, user, assistant, tool");
  const ChatMessage system_image{"system", {{ChatPart::Kind::kImage, ""}}, false, {}, {}};
  EXPECT_EQ(RenderError({system_image, Text("user", "a")}),
            "messages[0] (system): images are only allowed in user and tool messages");
  ChatMessage user_call = Text("user", "a");
  user_call.tool_calls = {{"f", "{}"}};
  EXPECT_EQ(RenderError({user_call}),
            "messages[0] (user): only assistant messages can have tool_calls");
}

std::string TokenizeError(const std::string& rendered, std::vector<int> counts) {
  try {
    TokenizePrompt(Qwen(), rendered, counts);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(ChatTemplateTest, ImagePadsMustMatchTheImages) {
  const std::string two = "<|image_pad|> and <|image_pad|>";
  EXPECT_EQ(TokenizePrompt(Qwen(), two, std::vector<int>{2, 3}),
            (std::vector<int32_t>{151655, 151655, 323, 220, 151655, 151655, 151655}));
  EXPECT_EQ(TokenizeError(two, {4}), "the prompt has 2 <|image_pad|> placeholders but 1 images");
  EXPECT_EQ(TokenizeError("no images", {4}),
            "the prompt has 0 <|image_pad|> placeholders but 1 images");
  EXPECT_EQ(TokenizeError(two, {4, 0}), "image 1 has 0 tokens; it needs at least 1");
}

TEST(ChatTemplateTest, AcceptsTheQwen3VlTemplatesOfTheFixtures) {
  for (const std::string& dir : {kData + "/tiny-qwen3vl/model", kData + "/qwen3vl-2b-config"}) {
    const ChatTemplateFile file = FindChatTemplate(dir);
    EXPECT_EQ(file.path, dir + "/chat_template.json");
    EXPECT_NO_THROW(CheckChatTemplate(file.text, file.path));
    // Windows line endings and a trailing newline make no difference.
    std::string crlf;
    for (const char c : file.text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    EXPECT_NO_THROW(CheckChatTemplate(crlf + "\r\n", file.path));
  }
}

TEST(ChatTemplateTest, RefusesAnyOtherTemplate) {
  const ChatTemplateFile file = FindChatTemplate(kData + "/tiny-qwen3vl/model");
  std::string edited = file.text;
  edited.replace(edited.find("<|im_start|>assistant\\n"), 0, "<think>\\n");
  try {
    CheckChatTemplate(edited, "model/chat_template.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("model/chat_template.json: the chat template is neither of the "
                            "Qwen3-VL templates qvl implements (hash ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find(", expected 99ac253185d6f7c1 for Instruct or 32334d10195d5f66 for "
                           "Thinking); prompts would not match what this model expects"),
              std::string::npos)
        << message;
  }
}

// The Thinking template as Qwen3-VL-2B-Thinking ships it (tests/data/qwen3vl-thinking).
TEST(ChatTemplateTest, TellsTheThinkingTemplateFromTheInstructOne) {
  EXPECT_EQ(CheckChatTemplate(FindChatTemplate(kData + "/tiny-qwen3vl/model").text, "instruct"),
            ChatTemplateKind::kInstruct);
  const ChatTemplateFile thinking = FindChatTemplate(kData + "/qwen3vl-thinking");
  EXPECT_EQ(CheckChatTemplate(thinking.text, thinking.path), ChatTemplateKind::kThinking);
}

// The expected strings below are what the Thinking template gives under transformers'
// Jinja set-up (trim_blocks, lstrip_blocks); each names the template branch it covers.
std::string Thinking(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true,
                     std::span<const std::string> tools = {}) {
  return RenderChatTemplate(messages, add_generation_prompt, tools, ChatTemplateKind::kThinking);
}

ChatMessage Reasoned(std::string content, std::string reasoning) {
  ChatMessage m = Text("assistant", std::move(content));
  m.reasoning = std::move(reasoning);
  return m;
}

TEST(ChatTemplateTest, ThinkingSingleTurnOpensTheReasoning) {
  // render_content with an image part; add_generation_prompt's '<think>\n'.
  const ChatMessage question{
      "user",
      {{ChatPart::Kind::kImage, ""}, {ChatPart::Kind::kText, "What is this?"}},
      false,
      {},
      {}};
  EXPECT_EQ(Thinking({Text("system", "Be brief."), question}),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n<|vision_start|>"
            "<|image_pad|><|vision_end|>What is this?<|im_end|>\n<|im_start|>assistant\n"
            "<think>\n");
}

TEST(ChatTemplateTest, ThinkingHistoryKeepsOnlyTheAnswersBeforeTheLastQuery) {
  // loop.index0 <= ns.last_query_index: the content alone, whether the reasoning came as
  // reasoning_content or inline before '</think>' (split off, lstrip'd).
  const std::string expected =
      "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n<|im_start|>user\n"
      "q2<|im_end|>\n<|im_start|>assistant\n<think>\n";
  EXPECT_EQ(Thinking({Text("user", "q1"), Reasoned("a1", "r1"), Text("user", "q2")}), expected);
  EXPECT_EQ(Thinking({Text("user", "q1"), Text("assistant", "<think>\nr1\n</think>\n\na1"),
                      Text("user", "q2")}),
            expected);
  // Instruct renders the same history with the reasoning field ignored.
  EXPECT_EQ(
      RenderChatTemplate({Text("user", "q1"), Reasoned("a1", "r1"), Text("user", "q2")}, true),
      "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n"
      "<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, ThinkingToolCallsAfterTheLastQueryKeepTheirReasoning) {
  // The tools system turn; after the last query, an assistant with reasoning_content gets
  // '<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content and, its content
  // empty, no '\n' before its first call; one without reasoning that is not last gets its
  // content alone. Tool results are user turns and never the last query.
  const std::vector<std::string> tools = {
      R"({"type": "function", "function": {"name": "get_weather", "parameters": {"type": )"
      R"("object"}}})"};
  ChatMessage call = Reasoned("", "\nNeed the tool.\n");
  call.tool_calls = {{"get_weather", R"({"city": "Paris"})"}};
  ChatMessage again = Text("assistant", "Let me also check.");
  again.tool_calls = {{"get_weather", "{}"}};
  EXPECT_EQ(
      Thinking({Text("user", "Weather in Paris?"), call, Text("tool", "18 C"), again,
                Text("tool", "19 C")},
               true, tools),
      "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user "
      "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
      "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
      "\"parameters\": {\"type\": \"object\"}}}\n</tools>\n\nFor each function call, return a "
      "json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
      "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
      "</tool_call><|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n"
      "<|im_start|>assistant\n<think>\nNeed the tool.\n</think>\n\n<tool_call>\n{\"name\": "
      "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n"
      "<|im_start|>user\n<tool_response>\n18 C\n</tool_response><|im_end|>\n"
      "<|im_start|>assistant\nLet me also check.\n<tool_call>\n{\"name\": \"get_weather\", "
      "\"arguments\": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n19 C\n"
      "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplateTest, ThinkingLastAssistantAndLaterSystemMessages) {
  // loop.last after the last query: an empty think block even without reasoning, and the
  // content lstrip'd.
  EXPECT_EQ(Thinking({Text("user", "q"), Text("assistant", "\n\na")}, false),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
            "a<|im_end|>\n");
  // A system message that is not first is a system turn; a user message that is a whole
  // '<tool_response>...</tool_response>' is not a query, so the last query is the first.
  const ChatMessage wrapped{
      "user", {{ChatPart::Kind::kText, "<tool_response>x</tool_response>"}}, false, {}, {}};
  EXPECT_EQ(Thinking({Text("user", "one"), Text("system", "two"), wrapped, Reasoned("a", "r")}),
            "<|im_start|>user\none<|im_end|>\n<|im_start|>system\ntwo<|im_end|>\n"
            "<|im_start|>user\n<tool_response>x</tool_response><|im_end|>\n<|im_start|>assistant\n"
            "<think>\nr\n</think>\n\na<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplateTest, ThinkingReasoningFieldOrInlineReasoning) {
  // reasoning_content given (even empty) leaves a '</think>' in the content alone; without
  // it the reasoning is between the last '<think>' and the first '</think>', newlines
  // stripped, and the content what follows the last '</think>'.
  EXPECT_EQ(Thinking({Text("user", "q"), Reasoned("x</think>y", ""), Text("user", "q2"),
                      Text("assistant", "<think>\n\nr2\n\n</think>\n\n\na2"), Reasoned("b", "")},
                     false),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nx</think>y<|im_end|>\n"
            "<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>\nr2\n</think>\n\n"
            "a2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nb<|im_end|>\n");
}

// The expected prompts below are what transformers' apply_chat_template gives with
// continue_final_message=True (its CONTINUE_FINAL_MESSAGE_TAG cut) under the same Jinja
// set-up, from each fixture template.
std::string Continued(const std::vector<ChatMessage>& messages,
                      ChatTemplateKind kind = ChatTemplateKind::kInstruct) {
  return RenderContinuedChat(messages, {}, kind);
}

TEST(ChatTemplateTest, ContinuedChatLeavesTheFinalMessageOpen) {
  const std::string user = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "Hello")}), user + "Hello");
  // The content as it came, spaces at both ends included; one that the closing
  // "<|im_end|>" holds ("m") is still cut at its own end.
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", " Hello ")}), user + " Hello ");
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "m")}), user + "m");
  // A list of parts is continued after its last one, even an empty one.
  const ChatMessage parts{
      "assistant", {{ChatPart::Kind::kText, "One."}, {ChatPart::Kind::kText, ""}}, false, {}, {}};
  EXPECT_EQ(Continued({Text("user", "Hi"), parts}), user + "One.");
  // The Instruct template ignores the reasoning field and writes a think block as text.
  EXPECT_EQ(Continued({Text("user", "Hi"), Reasoned("Hello", "Greet.")}), user + "Hello");
  const std::string tools[] = {R"({"type": "function", "function": {"name": "f"}})"};
  const std::string with_tools =
      RenderContinuedChat({Text("user", "Hi"), Text("assistant", "Hello")}, tools);
  EXPECT_TRUE(with_tools.starts_with("<|im_start|>system\n# Tools\n")) << with_tools;
  EXPECT_TRUE(with_tools.ends_with("</tool_call><|im_end|>\n" + user + "Hello")) << with_tools;
}

TEST(ChatTemplateTest, ThinkingContinuedChatContinuesTheReply) {
  constexpr ChatTemplateKind kThinking = ChatTemplateKind::kThinking;
  const std::string user = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  // After the last query the reasoning is closed, empty or not: the model writes reply.
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "\n\nHello")}, kThinking),
            user + "<think>\n\n</think>\n\nHello");
  EXPECT_EQ(Continued({Text("user", "Hi"), Reasoned("Hello", "Greet.")}, kThinking),
            user + "<think>\nGreet.\n</think>\n\nHello");
  // Inline reasoning in the template's own form is written as sent, even without a reply.
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "<think>\nGreet.\n</think>\n\n")},
                      kThinking),
            user + "<think>\nGreet.\n</think>\n\n");
  // Python's strip() takes U+3000 (an ideographic space) off before the search.
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "\u3000<think>\nr\n</think>\n\nx")},
                      kThinking),
            user + "<think>\nr\n</think>\n\nx");
  // No user query: the message is its content alone.
  EXPECT_EQ(Continued({Text("system", "S"), Text("assistant", "Hello")}, kThinking),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>assistant\nHello");
}

std::string ContinueError(const std::vector<ChatMessage>& messages,
                          ChatTemplateKind kind = ChatTemplateKind::kInstruct) {
  try {
    RenderContinuedChat(messages, {}, kind);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(ChatTemplateTest, OnlyAnAnswersTextCanBeContinued) {
  EXPECT_EQ(ContinueError({Text("user", "Hi")}),
            "the last message, messages[0], is a user one; only an assistant message can be "
            "continued");
  ChatMessage call = Text("assistant", "Let me see.");
  call.tool_calls = {{"f", "{}"}};
  EXPECT_EQ(ContinueError({Text("user", "Hi"), call}),
            "messages[1] has tool_calls; only an assistant message's text can be continued");
  const std::string empty = "messages[1] has no content: there is nothing to continue";
  EXPECT_EQ(ContinueError({Text("user", "Hi"), Text("assistant", "")}), empty);
  EXPECT_EQ(ContinueError({Text("user", "Hi"), {"assistant", {}, true, {}, {}}}), empty);
  // The Thinking template rewrites reasoning before a "</think>" that is not in its form
  // (a U+00AD soft hyphen is no space to strip()); the Instruct one writes it as text.
  const std::string rewritten =
      "messages[1]: the chat template does not write its content as sent (it moves the "
      "reasoning before a \"</think>\" into a think block), so it cannot be continued; send "
      "the reasoning apart, as reasoning_content";
  EXPECT_EQ(ContinueError({Text("user", "Hi"), Text("assistant", "Greet.</think>Hello")},
                          ChatTemplateKind::kThinking),
            rewritten);
  EXPECT_EQ(
      ContinueError({Text("user", "Hi"), Text("assistant", "\u00ad<think>\nr\n</think>\n\nx")},
                    ChatTemplateKind::kThinking),
      rewritten);
  EXPECT_EQ(Continued({Text("user", "Hi"), Text("assistant", "Greet.</think>Hello")}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nGreet.</think>Hello");
}

// The fixture's ids, as its config.json gives them.
constexpr VisionTokenIds kFixtureIds{151655, 151656, 151652, 151653};

TEST(ChatTemplateTest, TheFixtureTokenizerHasEveryTemplateToken) {
  EXPECT_NO_THROW(CheckTemplateTokens(Qwen(), "tokenizer.json", kFixtureIds, "config.json"));
  EXPECT_NO_THROW(CheckTemplateTokens(Qwen(), "tokenizer.json", {}, "config.json"));
}

// A tokenizer without one of the template's tokens tokenized it as text, found only when
// an image request came (a 400 blaming the client) or never (`qvl run`).
TEST(ChatTemplateTest, AMissingTemplateTokenOrAnIdConfigDisagreesWithIsNamed) {
  const std::string path = kData + "/tiny-qwen3vl/model/tokenizer.json";
  nlohmann::json json = ReadJson(path);
  nlohmann::json& added = json["added_tokens"];
  added.erase(std::remove_if(added.begin(), added.end(),
                             [](const nlohmann::json& t) { return t["content"] == "<|im_end|>"; }),
              added.end());
  const Tokenizer without = Tokenizer::FromJson(json.dump(), "model/tokenizer.json");
  try {
    CheckTemplateTokens(without, "model/tokenizer.json", kFixtureIds, "model/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_STREQ(e.what(),
                 "model/tokenizer.json: the added token <|im_end|> is missing (the Qwen3-VL chat "
                 "template writes it)");
  }
  VisionTokenIds swapped = kFixtureIds;
  std::swap(swapped.image_pad, swapped.video_pad);
  try {
    CheckTemplateTokens(Qwen(), "model/tokenizer.json", swapped, "model/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_STREQ(e.what(),
                 "model/config.json: image_token_id is 151656, but model/tokenizer.json has "
                 "<|image_pad|> as 151655");
  }
}

TEST(ChatTemplateTest, FindsTheTemplateWhereTransformersLooks) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("qvl_chat_template_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  EXPECT_THROW(FindChatTemplate(dir.string()), Error);

  write("tokenizer_config.json",
        R"({"chat_template": [{"name": "tool_use", "template": "T"},
                              {"name": "default", "template": "D"}]})");
  EXPECT_EQ(FindChatTemplate(dir.string()).text, "D");
  write("chat_template.json", R"({"chat_template": "J"})");
  EXPECT_EQ(FindChatTemplate(dir.string()).text, "J");
  write("chat_template.jinja", "K");
  EXPECT_EQ(FindChatTemplate(dir.string()).text, "K");

  std::filesystem::remove(dir / "chat_template.jinja");
  std::filesystem::remove(dir / "chat_template.json");
  // A list entry whose name is not a string is skipped, not an exception of another kind.
  write("tokenizer_config.json", R"({"chat_template": [{"name": 1, "template": "N"},
                                                         {"name": "default", "template": 2}]})");
  try {
    FindChatTemplate(dir.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_EQ(std::string(e.what()), (dir / "tokenizer_config.json").string() +
                                         ": chat_template lists no template named \"default\"");
  }
  write("chat_template.json", R"({"chat_template": 7})");
  try {
    FindChatTemplate(dir.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_EQ(std::string(e.what()),
              (dir / "chat_template.json").string() + ": chat_template must be a string");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qvl
