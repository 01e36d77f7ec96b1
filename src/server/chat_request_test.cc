#include "server/chat_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/chat_request_policy_for_test.h"
#include "server/request_checks_for_test.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

using ::qvl::testing::Base64;
using ::qvl::testing::ReadFile;

const std::string& PhotoDataUrl() {
  static const std::string url =
      "data:image/jpeg;base64," + Base64(ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg"));
  return url;
}

nlohmann::json UserWithImage(const std::string& url) {
  return {{"role", "user"},
          {"content",
           {{{"type", "image_url"}, {"image_url", {{"url", url}}}},
            {{"type", "text"}, {"text", "Describe this image."}}}}};
}

nlohmann::json Body(nlohmann::json messages) {
  return {{"model", "qwen3-vl"}, {"messages", std::move(messages)}};
}

class ChatRequestTest : public ::testing::Test {
 protected:
  ChatRequest Parse(const nlohmann::json& body) { return ParseChatRequest(body.dump(), policy_); }

  // The message of the FieldError the body raises; checks its code and field.
  std::string RawErrorOf(const std::string& text, ErrorCode code, const std::string& field) {
    return testing::FieldErrorOf([&] { ParseChatRequest(text, policy_); }, code, field);
  }
  std::string ErrorOf(const nlohmann::json& body, ErrorCode code, const std::string& field) {
    return RawErrorOf(body.dump(), code, field);
  }

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

TEST_F(ChatRequestTest, ParsesAFixtureRequestWithADataUrl) {
  nlohmann::json body = nlohmann::json::parse(ReadFile(kCases + "/03_two_images/request.json"));
  for (auto& part : body["messages"][0]["content"]) {
    if (part["type"] != "image_url") continue;
    const std::string file = part["image_url"]["url"];
    const bool png = file.size() > 4 && file.substr(file.size() - 4) == ".png";
    part["image_url"]["url"] = StrCat("data:image/", png ? "png" : "jpeg", ";base64,",
                                      Base64(ReadFile(kCases + "/03_two_images/" + file)));
  }
  const ChatRequest r = Parse(body);
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.generation.max_tokens, 16);
  EXPECT_EQ(r.generation.max_tokens_field, "max_tokens");
  ASSERT_TRUE(r.generation.sampling.temperature.has_value());
  EXPECT_EQ(*r.generation.sampling.temperature, 0.0f);
  ASSERT_EQ(r.generation.messages.size(), 1u);
  const ChatMessage& m = r.generation.messages[0];
  EXPECT_EQ(m.role, "user");
  EXPECT_FALSE(m.content_is_string);
  ASSERT_EQ(m.parts.size(), 5u);
  EXPECT_EQ(m.parts[0].kind, ChatPart::Kind::kText);
  EXPECT_EQ(m.parts[0].text, "Here are two pictures.");
  EXPECT_EQ(m.parts[1].kind, ChatPart::Kind::kImage);
  EXPECT_EQ(m.parts[3].kind, ChatPart::Kind::kImage);
  ASSERT_EQ(r.generation.images.size(), 2u);
  EXPECT_EQ(r.generation.images[0].name, "image 1");
  EXPECT_EQ(r.generation.images[0].field, "messages[0].content[1].image_url.url");
  EXPECT_EQ(r.generation.images[1].name, "image 2");
  EXPECT_EQ(r.generation.images[1].field, "messages[0].content[3].image_url.url");
  EXPECT_EQ(r.generation.images[1].detail, ImageDetail::kAuto);
  EXPECT_EQ(r.generation.images[1].bytes.size(),
            ReadFile(kCases + "/03_two_images/images/second.jpg").size());
  EXPECT_EQ(r.generation.top_logprobs, -1);
}

TEST_F(ChatRequestTest, ReadsEveryGenerationField) {
  nlohmann::json body = Body({{{"role", "user"}, {"content", "hi"}}});
  body.update({{"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"max_completion_tokens", 7},
               {"max_tokens", 99},
               {"temperature", 0.5},
               {"top_p", 0.9},
               {"top_k", -1},
               {"min_p", 0.05},
               {"presence_penalty", 0.5},
               {"frequency_penalty", -0.5},
               {"repetition_penalty", 1.1},
               {"seed", -1},
               {"stop", {"END", "\n\n"}},
               {"n", 1},
               {"logprobs", true},
               {"top_logprobs", 3},
               {"ignore_eos", true},
               {"max_image_tokens", 256},
               {"mm_processor_kwargs", {{"min_pixels", 65536}}},
               {"user", "ignored"},
               {"metadata", {{"a", "b"}}},
               {"tool_choice", "none"},
               {"response_format", {{"type", "text"}}}});
  const ChatRequest r = Parse(body);
  const GenerationRequest& g = r.generation;
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(g.max_tokens, 7);
  EXPECT_EQ(g.max_tokens_field, "max_completion_tokens");
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(*g.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(*g.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(*g.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(*g.sampling.seed, ~uint64_t{0});
  EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_EQ(g.top_logprobs, 3);
  EXPECT_TRUE(g.ignore_eos);
  EXPECT_EQ(g.image_budget.max_pixels, 256 * 1024);
  EXPECT_EQ(g.image_budget.min_pixels, 65536);
  ASSERT_EQ(g.messages.size(), 1u);
  EXPECT_TRUE(g.messages[0].content_is_string);
  EXPECT_EQ(g.messages[0].parts[0].text, "hi");
}

TEST_F(ChatRequestTest, ReturnProgressAsksForProgressWhenStreamed) {
  testing::ExpectReturnProgressOnlyWhenStreamed(
      Body({{{"role", "user"}, {"content", "hi"}}}),
      [&](const nlohmann::json& body) { return Parse(body); });
}

TEST_F(ChatRequestTest, AcceptsEveryImagePartSpellingAndRole) {
  const nlohmann::json body = Body({
      {{"role", "developer"}, {"content", {{{"type", "text"}, {"text", "Be brief."}}}}},
      {{"role", "user"},
       {"content",
        {{{"type", "image"}, {"image", PhotoDataUrl()}},
         {{"image_url", PhotoDataUrl()}},
         {{"type", "image_url"}, {"image_url", {{"url", PhotoDataUrl()}, {"detail", "low"}}}}}}},
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "c1"},
          {"type", "function"},
          {"function", {{"name", "zoom"}, {"arguments", "{\"x\": 1}"}}}}}}},
      {{"role", "tool"},
       {"tool_call_id", "c1"},
       {"content", {{{"type", "image"}, {"image", PhotoDataUrl()}}}}},
  });
  const ChatRequest r = Parse(body);
  const auto& m = r.generation.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[2].role, "assistant");
  EXPECT_TRUE(m[2].parts.empty());
  ASSERT_EQ(m[2].tool_calls.size(), 1u);
  EXPECT_EQ(m[2].tool_calls[0].name, "zoom");
  EXPECT_EQ(m[2].tool_calls[0].arguments, "{\"x\": 1}");
  EXPECT_EQ(m[3].role, "tool");
  ASSERT_EQ(r.generation.images.size(), 4u);
  EXPECT_EQ(r.generation.images[3].name, "image 4");
  EXPECT_EQ(r.generation.images[3].field, "messages[3].content[0].image");
  EXPECT_EQ(r.generation.images[1].field, "messages[1].content[1].image_url");
  EXPECT_EQ(r.generation.images[2].field, "messages[1].content[2].image_url.url");
  EXPECT_EQ(r.generation.images[2].detail, ImageDetail::kLow);
}

TEST_F(ChatRequestTest, MalformedBodies) {
  EXPECT_EQ(RawErrorOf("{\"messages\": [", ErrorCode::kInvalidArgument, ""),
            "malformed JSON in the request body: parse error at line 1, column 15: syntax error "
            "while parsing value - unexpected end of input; expected '[', '{', or a literal");
  // Regression (long fuzz run): a number beyond double made nlohmann throw out_of_range,
  // which escaped the request parser as an internal error instead of a 400.
  EXPECT_EQ(RawErrorOf("{\"max_tokens\": 6e5536}", ErrorCode::kInvalidArgument, ""),
            "malformed JSON in the request body: number overflow parsing '6e5536'");
  EXPECT_EQ(RawErrorOf("[1]", ErrorCode::kInvalidArgument, ""),
            "the request body must be a JSON object, got array");
  for (const char* empty : {"", " \r\n"}) {
    EXPECT_EQ(RawErrorOf(empty, ErrorCode::kInvalidArgument, ""),
              "the request body is empty: send the request as a JSON object with its "
              "Content-Length");
  }
  EXPECT_EQ(ErrorOf(nlohmann::json{{"model", "qwen3-vl"}}, ErrorCode::kInvalidArgument, "messages"),
            "messages: is required");
  EXPECT_EQ(ErrorOf(Body(nlohmann::json::array()), ErrorCode::kInvalidArgument, "messages"),
            "messages: needs at least one message");
  EXPECT_EQ(ErrorOf(Body("hi"), ErrorCode::kInvalidArgument, "messages"),
            "messages: expected an array, got string");
}

// Regression (found while hardening): a deeply nested value used to reach nlohmann's
// recursive dump() ("n" in the error message, tool call arguments) and overflow the
// HTTP thread's stack, killing the server with one unauthenticated request.
TEST_F(ChatRequestTest, DeeplyNestedBodiesAreRefusedNotACrash) {
  const std::string messages = R"("messages": [{"role": "user", "content": "hi"}])";
  const std::string deep = std::string(300000, '[') + std::string(300000, ']');
  const std::string expected = "the request body nests JSON deeper than 128 levels";
  EXPECT_EQ(RawErrorOf("{" + messages + R"(, "n": )" + deep + "}", ErrorCode::kInvalidArgument, ""),
            expected);
  const std::string deep_arguments =
      R"({"messages": [{"role": "assistant", "content": null, "tool_calls": [{"function":
          {"name": "f", "arguments": {"a": )" +
      deep + "}}}]}]}";
  EXPECT_EQ(RawErrorOf(deep_arguments, ErrorCode::kInvalidArgument, ""), expected);
  // A schema sent as a string is parsed again, with the same bound; it is written out as
  // the grammar cache's key.
  nlohmann::json deep_schema = Body({{{"role", "user"}, {"content", "hi"}}});
  deep_schema["guided_json"] = R"({"a": )" + deep + "}";
  EXPECT_EQ(ErrorOf(deep_schema, ErrorCode::kInvalidArgument, "guided_json"),
            "guided_json: expected a JSON schema (an object), got string");
  // Nesting a real request needs is accepted.
  const std::string nested = std::string(100, '[') + std::string(100, ']');
  EXPECT_EQ(Parse(nlohmann::json::parse(
                      R"({"messages": [{"role": "assistant", "content": null, "tool_calls":
                          [{"function": {"name": "f", "arguments": {"a": )" +
                      nested + R"(}}}]}, {"role": "user", "content": "hi"}]})"))
                .generation.messages[0]
                .tool_calls[0]
                .arguments,
            R"({"a":)" + nested + "}");
}

TEST_F(ChatRequestTest, WrongFieldTypesAndValuesNameTheField) {
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json body = Body({{{"role", "user"}, {"content", "hi"}}});
    body[key] = std::move(value);
    return body;
  };
  const ErrorCode bad = ErrorCode::kInvalidArgument;
  EXPECT_EQ(ErrorOf(with("temperature", "hot"), bad, "temperature"),
            "temperature: expected a number, got string");
  EXPECT_EQ(ErrorOf(with("temperature", 3), bad, "temperature"),
            "temperature: must be between 0 and 2, got 3");
  EXPECT_EQ(ErrorOf(with("top_p", 0), bad, "top_p"),
            "top_p: must be greater than 0 and at most 1, got 0");
  EXPECT_EQ(ErrorOf(with("max_tokens", 0), bad, "max_tokens"),
            "max_tokens: must be between 1 and 1048576, got 0");
  EXPECT_EQ(ErrorOf(with("max_tokens", 2.5), bad, "max_tokens"),
            "max_tokens: expected an integer, got 2.5");
  EXPECT_EQ(ErrorOf(with("stream", "yes"), bad, "stream"),
            "stream: expected true or false, got string");
  EXPECT_EQ(ErrorOf(with("stop", std::vector<std::string>(17, "a")), bad, "stop"),
            "stop: at most 16 stop strings are supported, got 17");
  EXPECT_EQ(ErrorOf(with("stop", {"a", 5}), bad, "stop[1]"),
            "stop[1]: expected a string, got integer");
  EXPECT_EQ(ErrorOf(with("stop", ""), bad, "stop"), "stop: stop strings cannot be empty");
  EXPECT_EQ(ErrorOf(with("top_logprobs", 2), bad, "top_logprobs"),
            "top_logprobs: needs \"logprobs\": true");
  EXPECT_EQ(Parse(with("max_pixels", 1000)).generation.image_budget.max_pixels, 1000);
}

// vLLM's continue_final_message: the answer continues a final assistant message.
TEST_F(ChatRequestTest, ContinueFinalMessageNeedsAnAnswerToContinue) {
  nlohmann::json body = Body({{{"role", "user"}, {"content", "hi"}},
                              {{"role", "assistant"}, {"content", "Hel</think>lo"}}});
  body["continue_final_message"] = true;
  const GenerationRequest g = Parse(body).generation;
  EXPECT_TRUE(g.continue_final_message);
  EXPECT_FALSE(g.add_generation_prompt);
  const ErrorCode bad = ErrorCode::kInvalidArgument;
  body["guided_regex"] = "[a-z]+";
  EXPECT_EQ(ErrorOf(body, bad, "continue_final_message"),
            "continue_final_message: a grammar (response_format, Ollama's format, guided "
            "decoding or a forced tool call) cannot bind an answer that continues the final "
            "assistant message: it would bind the continuation alone, not the message it "
            "continues");
  body.erase("guided_regex");
  // The Thinking template would write the reasoning before "</think>" apart.
  policy_.chat_template = ChatTemplateKind::kThinking;
  EXPECT_EQ(ErrorOf(body, bad, "continue_final_message")
                .rfind("continue_final_message: messages[1]: the chat template does not write its "
                       "content as sent",
                       0),
            0u);
  body["messages"][1] = {
      {"role", "assistant"},
      {"content", "Let me look."},
      {"tool_calls",
       {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{}"}}}}}}};
  EXPECT_EQ(ErrorOf(body, bad, "continue_final_message"),
            "continue_final_message: messages[1] has tool_calls; only an assistant message's "
            "text can be continued");
  // Without it, the assistant's turn is always opened.
  body = Body({{{"role", "user"}, {"content", "hi"}}});
  body["add_generation_prompt"] = false;
  EXPECT_EQ(ErrorOf(body, bad, "add_generation_prompt"),
            "add_generation_prompt: is not supported (the assistant's turn is opened unless "
            "continue_final_message is true); leave it out or at true");
}

TEST_F(ChatRequestTest, ImageBudgetSpellingsMustAgree) {
  nlohmann::json body = Body({{{"role", "user"}, {"content", "hi"}}});
  body["max_pixels"] = 1024 * 100;
  body["max_image_tokens"] = 100;
  body["mm_processor_kwargs"] = {{"size", {{"longest_edge", 1024 * 100}}}};
  EXPECT_EQ(Parse(body).generation.image_budget.max_pixels, 102400);
  body["max_image_tokens"] = 50;
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "max_image_tokens"),
            "max_image_tokens: contradicts max_pixels (51200 vs 102400 pixels)");
  body.erase("max_image_tokens");
  body["min_pixels"] = 1024 * 200;
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "min_pixels"),
            "min_pixels: is larger than mm_processor_kwargs.size.longest_edge (204800 > 102400 "
            "pixels)");
}

// The request-wide video keys: top-level token bounds, and mm_processor_kwargs' keys of
// transformers' video processor (its `size` counts all frames; min_pixels / max_pixels
// there stay the image processor's). A video part's own keys win.
TEST_F(ChatRequestTest, VideoBudgetAndSamplingFields) {
  const std::string mp4 =
      "data:video/mp4;base64," + Base64(ReadFile(kCases + "/07_video_frames/frames/clip.mp4"));
  const nlohmann::json plain = {{"type", "video_url"}, {"video_url", {{"url", mp4}}}};
  const nlohmann::json own = {{"type", "video"},
                              {"video", mp4},
                              {"fps", 1},
                              {"total_pixels", 100 * 32 * 32},
                              {"max_frames", 6}};
  nlohmann::json body = Body({{{"role", "user"}, {"content", {plain, own}}}});
  body["max_video_tokens"] = 512;
  body["min_video_tokens"] = 16;
  body["mm_processor_kwargs"] = {{"num_frames", 4}, {"max_frames", 10}, {"min_pixels", 65536}};
  ChatRequest r = Parse(body);
  ASSERT_EQ(r.generation.videos.size(), 2u);
  const VideoInput& a = r.generation.videos[0];
  // Tokens are the video's whole cost, timestamps included (ClipBudget), not pixels.
  EXPECT_EQ(a.budget.max_tokens, 512);
  EXPECT_EQ(a.budget.min_tokens, 16);
  EXPECT_EQ(a.budget.max_pixels, 0);
  EXPECT_EQ(a.num_frames, 4);
  EXPECT_EQ(a.max_frames, 10);
  EXPECT_EQ(r.generation.image_budget.min_pixels, 65536);  // an image key only
  const VideoInput& b = r.generation.videos[1];
  EXPECT_EQ(b.budget.max_pixels, 100 * 2048);
  EXPECT_EQ(b.budget.max_tokens, 0);  // its own maximum replaces the request's
  EXPECT_EQ(b.budget.min_tokens, 16);
  EXPECT_EQ(b.sample_fps, 1.0);
  EXPECT_EQ(b.num_frames, 0);  // its own rate replaces the request's frame count
  EXPECT_EQ(b.max_frames, 6);

  body.erase("mm_processor_kwargs");
  body["mm_processor_kwargs"] = {{"size", {{"longest_edge", 512 * 2048}}}};
  r = Parse(body);
  EXPECT_EQ(r.generation.videos[0].budget.max_pixels, 512 * 2048);
  EXPECT_EQ(r.generation.image_budget.max_pixels, 512 * 2048);  // and the images'
  // The frames' pixels and the whole cost in tokens are both bounds; the tighter holds.
  body["mm_processor_kwargs"]["size"]["longest_edge"] = 1000 * 2048;
  r = Parse(body);
  EXPECT_EQ(r.generation.videos[0].budget.max_pixels, 1000 * 2048);
  EXPECT_EQ(r.generation.videos[0].budget.max_tokens, 512);
  body.erase("mm_processor_kwargs");
  body["min_video_tokens"] = 1000;
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "min_video_tokens"),
            "min_video_tokens: is larger than max_video_tokens (1000 > 512)");
  body.erase("min_video_tokens");
  body["max_video_tokens"] = 0;
  EXPECT_EQ(
      ErrorOf(body, ErrorCode::kInvalidArgument, "max_video_tokens").rfind("max_video_tokens: ", 0),
      0u);
  body.erase("max_video_tokens");
  body["mm_processor_kwargs"] = {{"fps", 1}, {"num_frames", 4}};
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "mm_processor_kwargs.num_frames"),
            "mm_processor_kwargs.num_frames: and fps are mutually exclusive; give one");
  body["mm_processor_kwargs"] = {{"min_frames", 12}, {"max_frames", 10}};
  ErrorOf(body, ErrorCode::kInvalidArgument, "mm_processor_kwargs.min_frames");
  body["mm_processor_kwargs"] = {{"fps", -1}};
  ErrorOf(body, ErrorCode::kInvalidArgument, "mm_processor_kwargs.fps");
  body["mm_processor_kwargs"] = {{"do_sample_frames", false}};
  ErrorOf(body, ErrorCode::kInvalidArgument, "mm_processor_kwargs.do_sample_frames");
}

TEST_F(ChatRequestTest, ModelMustBeServed) {
  nlohmann::json body = Body({{{"role", "user"}, {"content", "hi"}}});
  body["model"] = "gpt-4o";
  EXPECT_EQ(ErrorOf(body, ErrorCode::kNotFound, "model"),
            "model: the model \"gpt-4o\" does not exist; this server serves "
            "\"Qwen/Qwen3-VL-2B-Instruct\", \"qwen3-vl\"");
  body.erase("model");
  EXPECT_EQ(Parse(body).model, "");
}

TEST_F(ChatRequestTest, MessageErrorsNameTheMessageAndPart) {
  const ErrorCode bad = ErrorCode::kInvalidArgument;
  EXPECT_EQ(ErrorOf(Body({{{"role", "robot"}, {"content", "hi"}}}), bad, "messages[0].role"),
            "messages[0].role: unknown role \"robot\"; use system, user, assistant or tool");
  EXPECT_EQ(ErrorOf(Body({{{"content", "hi"}}}), bad, "messages[0].role"),
            "messages[0].role: is required");
  EXPECT_EQ(
      ErrorOf(Body({{{"role", "user"}, {"content", "a"}}, {{"role", "system"}, {"content", "b"}}}),
              bad, "messages[1].role"),
      "messages[1].role: a system message must be the first message");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}}}), bad, "messages[0].content"),
            "messages[0].content: is required");
  EXPECT_EQ(
      ErrorOf(Body({{{"role", "user"}, {"content", "hi"}, {"name", 7}}}), bad, "messages[0].name"),
      "messages[0].name: expected a string, got integer");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", "a"}},
                          {{"role", "tool"}, {"content", "b"}, {"tool_call_id", {1}}}}),
                    bad, "messages[1].tool_call_id"),
            "messages[1].tool_call_id: expected a string, got array");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", 5}}}), bad, "messages[0].content"),
            "messages[0].content: expected a string or an array of content parts, got integer");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", {{{"type", "input_audio"}}}}}}), bad,
                    "messages[0].content[0].type"),
            "messages[0].content[0].type: \"input_audio\" parts are not supported; qvl reads "
            "text and images");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", {{{"type", "txt"}}}}}}), bad,
                    "messages[0].content[0].type"),
            "messages[0].content[0].type: unknown content part type \"txt\"; use text, image_url "
            "or image");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", {{{"type", "text"}, {"text", 1}}}}}}), bad,
                    "messages[0].content[0].text"),
            "messages[0].content[0].text: expected a string, got integer");
  nlohmann::json assistant_image = UserWithImage(PhotoDataUrl());
  assistant_image["role"] = "assistant";
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", "a"}}, assistant_image}), bad,
                    "messages[1].content[0]"),
            "messages[1].content[0]: images are only accepted in user and tool messages (the "
            "chat template drops them from assistant messages)");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"},
                           {"content",
                            {{{"type", "image_url"},
                              {"image_url", {{"url", PhotoDataUrl()}, {"detail", "max"}}}}}}}}),
                    bad, "messages[0].content[0].image_url.detail"),
            "messages[0].content[0].image_url.detail: use auto, low or high, got \"max\"");
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"},
                           {"content",
                            {{{"type", "image"}, {"image", PhotoDataUrl()}, {"max_pixels", 5}}}}}}),
                    bad, "messages[0].content[0].max_pixels"),
            "messages[0].content[0].max_pixels: per-image sizes are not supported; set "
            "min_pixels / max_pixels (or min_image_tokens / max_image_tokens) at the top level "
            "of the request");
}

TEST_F(ChatRequestTest, ImageSourceErrors) {
  const std::string field = "messages[0].content[0].image_url.url";
  auto error_for = [&](const std::string& url, ErrorCode code = ErrorCode::kInvalidArgument) {
    return ErrorOf(Body({UserWithImage(url)}), code, field);
  };
  EXPECT_EQ(error_for("data:image/png;base64,iVBO!!=="),
            field + ": invalid base64: character '!' at offset 4");
  EXPECT_EQ(error_for("data:image/png,rawbytes"),
            field + ": only base64 data URLs are supported (data:image/png;base64,...)");
  EXPECT_EQ(error_for("data:text/plain;base64,aGVsbG8="),
            field + ": the data URL holds text/plain, not an image");
  // The format is the engine's to check, when it decodes (engine_test): the parser only
  // loads the bytes.
  EXPECT_EQ(Parse(Body({UserWithImage("data:image/tiff;base64,SUkqAAgAAAA=")}))
                .generation.images[0]
                .bytes.size(),
            8u);
  EXPECT_EQ(error_for("https://example.com/cat.png"),
            field +
                ": this server does not fetch image URLs; send the image as a "
                "data:image/...;base64 URL (the operator can enable fetching with "
                "--allow-image-urls)");
  EXPECT_EQ(error_for("ftp://example.com/cat.png"),
            field +
                ": unsupported URL scheme in ftp://; use a data: URL, an http(s) URL or a "
                "file path");
  EXPECT_EQ(error_for("/etc/passwd"),
            field +
                ": local files are not allowed on this server; send the image as a "
                "data:image/...;base64 URL (the operator can allow a folder with "
                "--allowed-local-media DIR)");
  policy_.media.max_image_bytes = 1000;
  EXPECT_EQ(error_for(PhotoDataUrl(), ErrorCode::kTooLarge),
            field + ": the image is 16.5 KiB, over the limit of 1000 bytes per image");
}

TEST_F(ChatRequestTest, TooManyImages) {
  policy_.max_images = 2;
  nlohmann::json content = nlohmann::json::array();
  for (int i = 0; i < 3; ++i) content.push_back({{"type", "image"}, {"image", PhotoDataUrl()}});
  EXPECT_EQ(ErrorOf(Body({{{"role", "user"}, {"content", content}}}), ErrorCode::kInvalidArgument,
                    "messages[0].content[2].image"),
            "messages[0].content[2].image: too many images: this server accepts at most 2 per "
            "request");
}

TEST_F(ChatRequestTest, RelativeFilesResolveAgainstTheRequestFolder) {
  policy_.media.local.enabled = true;
  policy_.media.local.base_dir = kCases + "/02_one_image_jpeg";
  const nlohmann::json body =
      nlohmann::json::parse(ReadFile(kCases + "/02_one_image_jpeg/request.json"));
  const ChatRequest r = Parse(body);
  ASSERT_EQ(r.generation.images.size(), 1u);
  EXPECT_EQ(r.generation.images[0].bytes.size(),
            ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg").size());
}

}  // namespace
}  // namespace qvl
