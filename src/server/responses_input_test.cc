// Input items through ParseResponsesRequest (responses_input.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

TEST_F(ResponsesRequestTest, ReadsEveryItemKind) {
  const nlohmann::json body = Body(
      {{{"type", "message"}, {"role", "developer"}, {"content", {Text("Be brief.")}}},
       {{"role", "user"},
        {"content",
         {Text("Look:"),
          {{"type", "input_image"}, {"image_url", PhotoDataUrl()}, {"detail", "low"}}}}},
       {{"type", "message"},
        {"role", "assistant"},
        {"content",
         {{{"type", "output_text"}, {"text", "A cat."}, {"annotations", nlohmann::json::array()}},
          {{"type", "refusal"}, {"refusal", "No more."}}}}},
       {{"type", "function_call"},
        {"id", "fc_1"},
        {"call_id", "c1"},
        {"name", "zoom"},
        {"arguments", "{\"x\": 1}"},
        {"status", "completed"}},
       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "zoomed"}},
       {{"type", "function_call"}, {"call_id", "c2"}, {"name", "crop"}, {"arguments", "{}"}},
       {{"type", "function_call_output"},
        {"call_id", "c2"},
        {"output", {Text("cropped"), {{"type", "input_image"}, {"image_url", PhotoDataUrl()}}}}},
       {{"role", "user"}, {"content", "Thanks"}}});
  const ResponsesRequest r = Parse(body);
  EXPECT_EQ(Describe(r.generation.messages),
            "system string: [Be brief.]\n"
            "user parts: [Look:] [image]\n"
            "assistant parts: [A cat.] [No more.] call zoom{\"x\": 1}\n"
            "tool string: [zoomed]\n"
            "assistant string: call crop{}\n"
            "tool parts: [cropped] [image]\n"
            "user string: [Thanks]\n");
  ASSERT_EQ(r.generation.images.size(), 2u);
  EXPECT_EQ(r.generation.images[0].field, "input[1].content[1].image_url");
  EXPECT_EQ(r.generation.images[0].name, "image 1");
  EXPECT_EQ(r.generation.images[0].detail, ImageDetail::kLow);
  EXPECT_EQ(r.generation.images[0].bytes.size(),
            ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg").size());
  EXPECT_EQ(r.generation.images[1].field, "input[6].output[1].image_url");
  EXPECT_EQ(r.generation.images[1].detail, ImageDetail::kAuto);
}

TEST_F(ResponsesRequestTest, InstructionsAndLeadingSystemItemsAreOneSystemTurn) {
  nlohmann::json body = Body({{{"role", "system"}, {"content", "B"}},
                              {{"role", "developer"}, {"content", {Text("C"), Text("D")}}},
                              {{"role", "user"}, {"content", "hi"}}});
  body["instructions"] = "A";
  ResponsesRequest r = Parse(body);
  EXPECT_EQ(Describe(r.generation.messages), "system string: [A\n\nB\n\nCD]\nuser string: [hi]\n");
  EXPECT_EQ(r.echo["instructions"], "A");

  body = Body("hi");
  body["instructions"] = "Answer in French.";
  r = Parse(body);
  EXPECT_EQ(Describe(r.generation.messages),
            "system string: [Answer in French.]\nuser string: [hi]\n");

  body = Body({{{"role", "user"}, {"content", "a"}}, {{"role", "developer"}, {"content", "b"}}});
  EXPECT_EQ(ErrorOf(body, "input[1].role"),
            "input[1].role: a system message must come before every other item (the chat "
            "template shows the system turn first only)");
  body["input"][1]["content"] = {{{"type", "input_image"}, {"image_url", PhotoDataUrl()}}};
  body["input"].erase(0);
  EXPECT_EQ(ErrorOf(body, "input[0].content[0]"),
            "input[0].content[0]: images are only accepted in user and tool messages (the chat "
            "template drops them from system messages)");
}

TEST_F(ResponsesRequestTest, FunctionCallHistoryGivesTheChatMessages) {
  const nlohmann::json responses = Body(
      {{{"role", "user"}, {"content", "Weather in Paris and Rome?"}},
       {{"role", "assistant"}, {"content", "Checking."}},
       {{"type", "function_call"},
        {"call_id", "c1"},
        {"name", "get_weather"},
        {"arguments", R"({"city": "Paris"})"}},
       {{"type", "function_call"},
        {"call_id", "c2"},
        {"name", "get_weather"},
        {"arguments", R"({"city": "Rome"})"}},
       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "sunny"}},
       {{"type", "function_call_output"}, {"call_id", "c2"}, {"output", "rain"}},
       {{"type", "function_call"}, {"call_id", "c3"}, {"name", "forecast"}, {"arguments", "{}"}},
       {{"type", "function_call_output"}, {"call_id", "c3"}, {"output", "dry"}}});
  auto call = [](const char* id, const char* name, const char* arguments) {
    return nlohmann::json{
        {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
  };
  const nlohmann::json chat = {{"messages",
                                {{{"role", "user"}, {"content", "Weather in Paris and Rome?"}},
                                 {{"role", "assistant"},
                                  {"content", "Checking."},
                                  {"tool_calls",
                                   {call("c1", "get_weather", R"({"city": "Paris"})"),
                                    call("c2", "get_weather", R"({"city": "Rome"})")}}},
                                 {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "sunny"}},
                                 {{"role", "tool"}, {"tool_call_id", "c2"}, {"content", "rain"}},
                                 {{"role", "assistant"},
                                  {"content", nullptr},
                                  {"tool_calls", {call("c3", "forecast", "{}")}}},
                                 {{"role", "tool"}, {"tool_call_id", "c3"}, {"content", "dry"}}}}};
  const std::vector<ChatMessage> a = Parse(responses).generation.messages;
  const std::vector<ChatMessage> b = ParseChat(chat.dump()).generation.messages;
  EXPECT_EQ(Describe(a), Describe(b));
  EXPECT_EQ(a.size(), 6u);
  EXPECT_EQ(RenderChatTemplate(a, true), RenderChatTemplate(b, true));
}

// A Thinking model's reasoning item, as qvl's own output gives it, is the reasoning of the
// assistant turn its message or calls write.
TEST_F(ResponsesRequestTest, AReasoningItemIsTheReasoningOfTheAssistantTurnAfterIt) {
  const nlohmann::json reasoning = {{"type", "reasoning"},
                                    {"id", "rs_1"},
                                    {"summary", nlohmann::json::array()},
                                    {"content",
                                     {{{"type", "reasoning_text"}, {"text", "Blue light "}},
                                      {{"type", "reasoning_text"}, {"text", "scatters."}}}},
                                    {"status", "completed"}};
  const nlohmann::json answer = {{"type", "message"},
                                 {"role", "assistant"},
                                 {"content", {{{"type", "output_text"}, {"text", "Blue."}}}}};
  const std::vector<ChatMessage> messages =
      Parse(Body({{{"role", "user"}, {"content", "Why?"}},
                  reasoning,
                  answer,
                  reasoning,
                  {{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", "{}"}},
                  {{"type", "function_call_output"}, {"call_id", "c"}, {"output", "ok"}}}))
          .generation.messages;
  EXPECT_EQ(Describe(messages),
            "user string: [Why?]\n"
            "assistant parts: [Blue.]\n"
            "assistant string: call f{}\n"
            "tool string: [ok]\n");
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[1].reasoning, "Blue light scatters.");
  EXPECT_EQ(messages[2].reasoning, "Blue light scatters.");
  EXPECT_EQ(messages[0].reasoning, std::nullopt);
}

TEST_F(ResponsesRequestTest, InputErrorsNameTheItemAndPart) {
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}}, "input"), "input: is required");
  EXPECT_EQ(ErrorOf(Body(nlohmann::json::array()), "input"), "input: has no items");
  EXPECT_EQ(ErrorOf(Body(5), "input"),
            "input: expected a string or an array of items, got integer");
  EXPECT_EQ(ErrorOf(Body({{{"content", "hi"}}}), "input[0].type"), "input[0].type: is required");
  EXPECT_EQ(ErrorOf(Body({{{"role", "tool"}, {"content", "hi"}}}), "input[0].role"),
            "input[0].role: unknown role \"tool\"; use user, assistant, system or developer");
  EXPECT_EQ(ErrorOf(Body({{{"type", "reasoning"}, {"content", 5}}}), "input[0].content"),
            "input[0].content: expected an array, got integer");
  EXPECT_EQ(ErrorOf(Body({{{"type", "reasoning"}, {"content", {{{"type", "reasoning_text"}}}}}}),
                    "input[0].content[0].text"),
            "input[0].content[0].text: is required");
  EXPECT_EQ(ErrorOf(Body({{{"type", "item_reference"}, {"id", "msg_1"}}}), "input[0].type"),
            "input[0].type: qvl does not look items up by id; send the item itself");
  EXPECT_EQ(ErrorOf(Body({{{"type", "web_search_call"}}}), "input[0].type"),
            "input[0].type: \"web_search_call\" items are not supported; qvl reads message, "
            "reasoning, function_call and function_call_output items");
  EXPECT_EQ(ErrorOf(Body({{{"type", "function_call"}, {"name", "f"}}}), "input[0].call_id"),
            "input[0].call_id: is required");
  EXPECT_EQ(
      ErrorOf(
          Body({{{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", 5}}}),
          "input[0].arguments"),
      "input[0].arguments: expected a JSON string or object, got integer");
  EXPECT_EQ(ErrorOf(Body({{{"type", "function_call_output"}, {"call_id", "c"}, {"output", 5}}}),
                    "input[0].output"),
            "input[0].output: expected a string or an array of input_text and input_image parts, "
            "got integer");
  auto user_part = [](nlohmann::json part) {
    return Body({{{"role", "user"}, {"content", {std::move(part)}}}});
  };
  EXPECT_EQ(
      ErrorOf(user_part({{"type", "input_file"}, {"file_id", "f"}}), "input[0].content[0].type"),
      "input[0].content[0].type: \"input_file\" parts are not supported; qvl reads text and "
      "images");
  EXPECT_EQ(ErrorOf(user_part({{"type", "input_audio"}}), "input[0].content[0].type"),
            "input[0].content[0].type: \"input_audio\" parts are not supported; qvl reads text "
            "and images");
  EXPECT_EQ(
      ErrorOf(user_part({{"type", "output_text"}, {"text", "x"}}), "input[0].content[0].type"),
      "input[0].content[0].type: \"output_text\" parts belong to assistant messages; use "
      "input_text");
  EXPECT_EQ(ErrorOf(user_part({{"type", "text"}, {"text", "x"}}), "input[0].content[0].type"),
            "input[0].content[0].type: unknown content part type \"text\"; use input_text, "
            "input_image, or in assistant messages output_text");
}

TEST_F(ResponsesRequestTest, ImagePartsGoThroughTheChatImagePolicy) {
  auto user_part = [](nlohmann::json part) {
    return Body({{{"role", "user"}, {"content", {Text("see"), std::move(part)}}}});
  };
  const std::string field = "input[0].content[1]";
  EXPECT_EQ(
      ErrorOf(user_part({{"type", "input_image"}, {"file_id", "file-1"}}), field + ".file_id"),
      field +
          ".file_id: qvl has no file store; send the image as image_url (a data: URL or an "
          "http(s) URL)");
  EXPECT_EQ(ErrorOf(user_part({{"type", "input_image"}, {"image_url", {{"url", PhotoDataUrl()}}}}),
                    field + ".image_url"),
            field + ".image_url: expected a string, got object");
  EXPECT_EQ(
      ErrorOf(
          user_part({{"type", "input_image"}, {"image_url", PhotoDataUrl()}, {"detail", "max"}}),
          field + ".detail"),
      field + ".detail: use auto, low or high, got \"max\"");
  EXPECT_EQ(
      ErrorOf(user_part({{"type", "input_image"}, {"image_url", "https://example.com/a.png"}}),
              field + ".image_url"),
      field +
          ".image_url: this server does not fetch image URLs; send the image as a "
          "data:image/...;base64 URL (the operator can enable fetching with "
          "--allow-image-urls)");
  nlohmann::json assistant = user_part({{"type", "input_image"}, {"image_url", PhotoDataUrl()}});
  assistant["input"][0]["role"] = "assistant";
  EXPECT_EQ(ErrorOf(assistant, field),
            field +
                ": images are only accepted in user and tool messages (the chat template drops "
                "them from assistant messages)");
  policy_.max_images = 1;
  nlohmann::json two = user_part({{"type", "input_image"}, {"image_url", PhotoDataUrl()}});
  two["input"][0]["content"].push_back({{"type", "input_image"}, {"image_url", PhotoDataUrl()}});
  EXPECT_EQ(ErrorOf(two, "input[0].content[2].image_url"),
            "input[0].content[2].image_url: too many images: this server accepts at most 1 per "
            "request");
}

}  // namespace
}  // namespace qvl
