#include "server/inline_media.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "server/anthropic_request.h"
#include "server/chat_request.h"
#include "server/ollama_request.h"
#include "server/responses_request.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

using ::qvl::testing::Base64;
using ::qvl::testing::ReadFile;

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }

const std::string& Photo() {
  static const std::string bytes = ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg");
  return bytes;
}
const std::string& Clip() {
  static const std::string bytes = ReadFile(kCases + "/07_video_frames/frames/clip.mp4");
  return bytes;
}
std::string PhotoUrl() { return "data:image/jpeg;base64," + Base64(Photo()); }
std::string ClipUrl() { return "data:video/mp4;base64," + Base64(Clip()); }

ChatRequestPolicy Policy() {
  ChatRequestPolicy p;
  p.pixels_per_image_token = 32 * 32;
  p.pixels_per_video_token = 2 * 32 * 32;
  return p;
}

nlohmann::json User(nlohmann::json parts) {
  return {{"messages", {{{"role", "user"}, {"content", std::move(parts)}}}}};
}

// A data URL in every field where messages carry media, then `question`.
nlohmann::json EveryMediaField(const std::string& question) {
  return User({
      {{"type", "image_url"}, {"image_url", {{"url", PhotoUrl()}, {"detail", "low"}}}},
      {{"type", "image_url"}, {"image_url", PhotoUrl()}},
      {{"type", "image"}, {"image", PhotoUrl()}},
      {{"type", "video_url"}, {"video_url", {{"url", ClipUrl()}}}},
      {{"type", "video"}, {"video", ClipUrl()}},
      {{"type", "video"}, {"video", {PhotoUrl(), PhotoUrl()}}, {"fps", 2}},
      {{"type", "text"}, {"text", question}},
  });
}

TEST(InlineMediaTest, TakesEveryMediaFieldsPayloadOutOfTheBody) {
  const nlohmann::json body = EveryMediaField("What is this?");
  std::string text = body.dump();
  InlineMedia media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);

  const nlohmann::json left = nlohmann::json::parse(text);
  nlohmann::json expected = body;
  nlohmann::json& parts = expected["messages"][0]["content"];
  parts[0]["image_url"]["url"] = parts[1]["image_url"] = parts[2]["image"] = parts[5]["video"][0] =
      parts[5]["video"][1] = "data:image/jpeg;base64,";
  parts[3]["video_url"]["url"] = parts[4]["video"] = "data:video/mp4;base64,";
  EXPECT_EQ(left, expected);

  const std::string part = "messages[0].content[";
  for (const char* field :
       {"0].image_url.url", "1].image_url", "2].image", "5].video[0]", "5].video[1]"}) {
    EXPECT_EQ(media.Take(part + field), Bytes(Photo())) << field;
  }
  for (const char* field : {"3].video_url.url", "4].video"}) {
    EXPECT_EQ(media.Take(part + field), Bytes(Clip())) << field;
  }
  EXPECT_EQ(media.Take(part + "0].image_url.url"), std::nullopt);  // handed out once
}

TEST(InlineMediaTest, LeavesWhatItCannotTakeForTheRequestParser) {
  const std::string url = PhotoUrl();
  const std::string escaped = "data:image\\/jpeg;base64,/9j\\/4AAQ";
  const std::string cases[] = {
      // Not where messages carry media: a text that holds a data URL stays text.
      User({{{"type", "text"}, {"text", url}}}).dump(),
      nlohmann::json{{"image", url}}.dump(),
      // A JSON escape in the payload, a key written with an escape, invalid base64.
      R"({"messages":[{"content":[{"image":")" + escaped + R"("}]}]})",
      R"({"messages":[{"content":[{"im\u0061ge":")" + url + R"("}]}]})",
      User({{{"image", "data:image/png;base64,AAA*"}}}).dump(),
      User({{{"image", "data:image/png,iVBORw0K"}}}).dump(),
      // Brackets or a string that do not close: the JSON parser reports the body as sent.
      R"({"messages":[{"content":[{"image":")" + url + R"("}]})",
      R"({"messages":[{"content":[{"image":")" + url,
  };
  for (const std::string& body : cases) {
    std::string text = body;
    InlineMedia media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);
    EXPECT_EQ(text, body);
    EXPECT_EQ(media.Take("messages[0].content[0].image"), std::nullopt) << body.substr(0, 60);
  }
}

TEST(InlineMediaTest, ALaterValueOfAFieldWinsAsInTheParsedJson) {
  const std::string first = "data:image/png;base64," + Base64("first");
  const std::string second = "data:image/png;base64," + Base64("second");
  std::string text =
      R"({"messages":[{"content":[{"image":")" + first + R"(","image":")" + second + R"("}]}]})";
  InlineMedia media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);
  EXPECT_EQ(
      text,
      R"({"messages":[{"content":[{"image":"data:image/png;base64,","image":"data:image/png;base64,"}]}]})");
  EXPECT_EQ(media.Take("messages[0].content[0].image"), Bytes("second"));
}

// The request parser gives the same request, and the same errors, whether the payloads
// were taken out first or not.
TEST(InlineMediaTest, TheParsedRequestIsTheSame) {
  const nlohmann::json body = EveryMediaField("Compare.");
  ChatRequestPolicy policy = Policy();
  const ChatRequest plain = ParseChatRequest(body.dump(), policy);
  std::string text = body.dump();
  InlineMedia media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);
  policy.media.inline_media = &media;
  const ChatRequest taken = ParseChatRequest(text, policy);
  const GenerationRequest& a = plain.generation;
  const GenerationRequest& b = taken.generation;
  ASSERT_EQ(b.images.size(), 3u);
  ASSERT_EQ(b.videos.size(), 3u);
  for (size_t i = 0; i < b.images.size(); ++i) {
    EXPECT_EQ(b.images[i].bytes, Bytes(Photo())) << b.images[i].field;
    EXPECT_EQ(b.images[i].field, a.images[i].field);
  }
  for (size_t i = 0; i < b.videos.size(); ++i) {
    EXPECT_EQ(b.videos[i].file, a.videos[i].file) << b.videos[i].field;
    EXPECT_EQ(b.videos[i].frames, a.videos[i].frames) << b.videos[i].field;
  }
  EXPECT_EQ(b.videos[2].frames.size(), 2u);
  EXPECT_EQ(b.messages.size(), a.messages.size());

  auto error_of = [](const std::string& request, const ChatRequestPolicy& p) -> std::string {
    try {
      ParseChatRequest(request, p);
    } catch (const FieldError& e) {
      return StrCat(e.field(), " | ", e.what());
    }
    return "no error";
  };
  policy.media.max_image_bytes = 1000;
  policy.media.inline_media = nullptr;
  const std::string expected = error_of(body.dump(), policy);
  EXPECT_NE(expected.find("messages[0].content[0].image_url.url | "), std::string::npos)
      << expected;
  EXPECT_NE(expected.find("over the limit of"), std::string::npos) << expected;
  text = body.dump();
  media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);
  policy.media.inline_media = &media;
  EXPECT_EQ(error_of(text, policy), expected);
}

// A Responses request with an image in a message and one in a function call's output.
nlohmann::json ResponsesBody(const std::string& url) {
  return {{"input",
           {{{"role", "user"},
             {"content",
              {{{"type", "input_image"}, {"image_url", url}},
               {{"type", "input_text"}, {"text", url}}}}},
            {{"type", "function_call"}, {"call_id", "c1"}, {"name", "look"}, {"arguments", "{}"}},
            {{"type", "function_call_output"},
             {"call_id", "c1"},
             {"output", {{{"type", "input_image"}, {"image_url", url}}}}}}}};
}

// Ollama's chat and generate bodies with the photo as bare base64 and as a data URL.
nlohmann::json OllamaChatBody() {
  return {{"model", "qvl"},
          {"messages",
           {{{"role", "user"},
             {"content", "What is this?"},
             {"images", {Base64(Photo()), PhotoUrl()}}}}}};
}
nlohmann::json OllamaGenerateBody() {
  return {{"model", "qvl"}, {"prompt", "What is this?"}, {"images", {Base64(Photo()), PhotoUrl()}}};
}

// An Anthropic Messages body with `data` as the base64 source of an image in a user
// message and of one in a tool result, and the photo's base64 as a text.
nlohmann::json AnthropicMessagesBody(const std::string& data) {
  const nlohmann::json image = {
      {"type", "image"},
      {"source", {{"type", "base64"}, {"media_type", "image/jpeg"}, {"data", data}}}};
  return {
      {"model", "qvl"},
      {"max_tokens", 8},
      {"messages",
       {{{"role", "user"}, {"content", {image, {{"type", "text"}, {"text", Base64(Photo())}}}}},
        {{"role", "assistant"},
         {"content",
          {{{"type", "tool_use"}, {"id", "t1"}, {"name", "look"}, {"input", {{"a", 1}}}}}}},
        {{"role", "user"},
         {"content", {{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", {image}}}}}}}}};
}

TEST(InlineMediaTest, TakesEveryRoutesMediaFields) {
  const std::string url = PhotoUrl();
  std::string text = ResponsesBody(url).dump();
  InlineMedia media = TakeInlineMedia(&text, MediaLayout::kResponses);
  nlohmann::json expected = ResponsesBody("data:image/jpeg;base64,");
  expected["input"][0]["content"][1]["text"] = url;  // a text is no media field
  EXPECT_EQ(nlohmann::json::parse(text), expected);
  EXPECT_EQ(media.Take("input[0].content[0].image_url"), Bytes(Photo()));
  EXPECT_EQ(media.Take("input[2].output[0].image_url"), Bytes(Photo()));

  text = OllamaChatBody().dump();
  media = TakeInlineMedia(&text, MediaLayout::kOllamaChat);
  expected = OllamaChatBody();
  expected["messages"][0]["images"] = {"", "data:image/jpeg;base64,"};
  EXPECT_EQ(nlohmann::json::parse(text), expected);
  EXPECT_EQ(media.Take("messages[0].images[0]"), Bytes(Photo()));
  EXPECT_EQ(media.Take("messages[0].images[1]"), Bytes(Photo()));

  text = OllamaGenerateBody().dump();
  media = TakeInlineMedia(&text, MediaLayout::kOllamaGenerate);
  expected = OllamaGenerateBody();
  expected["images"] = {"", "data:image/jpeg;base64,"};
  EXPECT_EQ(nlohmann::json::parse(text), expected);
  EXPECT_EQ(media.Take("images[0]"), Bytes(Photo()));
  EXPECT_EQ(media.Take("images[1]"), Bytes(Photo()));

  text = AnthropicMessagesBody(Base64(Photo())).dump();
  media = TakeInlineMedia(&text, MediaLayout::kAnthropicMessages);
  EXPECT_EQ(nlohmann::json::parse(text), AnthropicMessagesBody(""));
  EXPECT_EQ(media.Take("messages[0].content[0].source.data"), Bytes(Photo()));
  EXPECT_EQ(media.Take("messages[2].content[0].content[0].source.data"), Bytes(Photo()));
  // Anthropic's source data is bare base64: a data URL there is the parser's to refuse.
  const std::string url_as_data = AnthropicMessagesBody(PhotoUrl()).dump();
  text = url_as_data;
  TakeInlineMedia(&text, MediaLayout::kAnthropicMessages);
  EXPECT_EQ(text, url_as_data);

  // Each route reads its own fields only: a chat body is left alone by the others.
  const std::string chat = EveryMediaField("Hi").dump();
  for (MediaLayout other : {MediaLayout::kResponses, MediaLayout::kOllamaChat,
                            MediaLayout::kOllamaGenerate, MediaLayout::kAnthropicMessages}) {
    text = chat;
    TakeInlineMedia(&text, other);
    EXPECT_EQ(text, chat);
  }
  // Bare base64 that does not decode stays for the parser, whose error names it.
  const std::string bad = R"({"model":"qvl","prompt":"hi","images":["not base64!"]})";
  text = bad;
  media = TakeInlineMedia(&text, MediaLayout::kOllamaGenerate);
  EXPECT_EQ(text, bad);
}

// Every route parses the same request, images and all, whether the payloads were taken
// out first or not.
TEST(InlineMediaTest, EveryRouteParsesTheSameRequest) {
  using Parse = std::vector<ImageInput> (*)(const std::string&, const ChatRequestPolicy&);
  const struct {
    MediaLayout layout;
    std::string body;
    Parse parse;
  } routes[] = {
      {MediaLayout::kResponses, ResponsesBody(PhotoUrl()).dump(),
       [](const std::string& b, const ChatRequestPolicy& p) {
         return ParseResponsesRequest(b, p).generation.images;
       }},
      {MediaLayout::kOllamaChat, OllamaChatBody().dump(),
       [](const std::string& b, const ChatRequestPolicy& p) {
         return ParseOllamaChat(b, p).generation.images;
       }},
      {MediaLayout::kOllamaGenerate, OllamaGenerateBody().dump(),
       [](const std::string& b, const ChatRequestPolicy& p) {
         return ParseOllamaGenerate(b, p).generation.images;
       }},
      {MediaLayout::kAnthropicMessages, AnthropicMessagesBody(Base64(Photo())).dump(),
       [](const std::string& b, const ChatRequestPolicy& p) {
         return ParseAnthropicRequest(b, p).generation.images;
       }},
  };
  for (const auto& route : routes) {
    SCOPED_TRACE(route.body.substr(0, 40));
    ChatRequestPolicy policy = Policy();
    const std::vector<ImageInput> plain = route.parse(route.body, policy);
    std::string text = route.body;
    InlineMedia media = TakeInlineMedia(&text, route.layout);
    EXPECT_EQ(route.body.size() - text.size(), 2 * Base64(Photo()).size());
    policy.media.inline_media = &media;
    const std::vector<ImageInput> taken = route.parse(text, policy);
    ASSERT_EQ(taken.size(), 2u);
    ASSERT_EQ(plain.size(), 2u);
    for (size_t i = 0; i < taken.size(); ++i) {
      EXPECT_EQ(taken[i].bytes, Bytes(Photo())) << taken[i].field;
      EXPECT_EQ(taken[i].field, plain[i].field);
    }
  }
}

// A stored Responses conversation keeps its images whole: a later previous_response_id
// reads them from there, not from the body they were cut from.
TEST(InlineMediaTest, AStoredResponsesConversationKeepsItsDataUrls) {
  const nlohmann::json body = ResponsesBody(PhotoUrl());
  std::string text = body.dump();
  InlineMedia media = TakeInlineMedia(&text, MediaLayout::kResponses);
  ChatRequestPolicy policy = Policy();
  policy.media.inline_media = &media;
  const StoredConversation none = [](const std::string&) { return std::nullopt; };
  const ResponsesRequest request = ParseResponsesRequest(text, policy, none);
  ASSERT_TRUE(request.store);
  EXPECT_EQ(request.conversation, body["input"]);
}

int64_t StatusKib(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::string(key).size()));
  }
  return -1;
}

// 48 MiB of bytes that do not compress, 64 MiB as base64, starting with `signature`.
std::string Incompressible(const std::string& signature) {
  std::string bytes(size_t{48} << 20, '\0');
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (char& c : bytes) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    c = static_cast<char>(state >> 56);
  }
  bytes.replace(0, signature.size(), signature);
  return bytes;
}

// How much the peak resident memory grows over what it is on entry while `parse` runs,
// in KiB.
int64_t PeakGrowthKib(const std::function<void()>& parse) {
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";  // resets VmHWM to the current resident size
  }
  const int64_t before_kib = StatusKib("VmRSS:");
  EXPECT_LE(StatusKib("VmHWM:"), before_kib + 1024);
  parse();
  return StatusKib("VmHWM:") - before_kib;
}

// Parsed as it came, a payload would also be in the JSON lexer's buffer and the parsed
// document (64 MiB each, 176 MiB over the body in all); taken out first, the decoded
// bytes alone.
TEST(InlineMediaTest, PeakMemoryIsTheBodyAndTheDecodedBytesOnce) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer keeps freed blocks in quarantine: resident memory "
                  "measures that, not the parser";
#endif
  std::string clip =
      Incompressible(std::string("\0\0\0\x18"
                                 "ftyp",
                                 8));
  std::string text = User({{{"type", "video_url"},
                            {"video_url", {{"url", "data:video/mp4;base64," + Base64(clip)}}}},
                           {{"type", "text"}, {"text", "What happens?"}}})
                         .dump();
  const int64_t clip_kib = static_cast<int64_t>(clip.size() >> 10);
  clip = std::string();
  const int64_t growth_kib = PeakGrowthKib([&] {
    InlineMedia media = TakeInlineMedia(&text, MediaLayout::kChatCompletions);
    ChatRequestPolicy policy = Policy();
    policy.media.video.max_encoded_bytes = int64_t{64} << 20;
    policy.media.inline_media = &media;
    const ChatRequest request = ParseChatRequest(text, policy);
    ASSERT_EQ(request.generation.videos.size(), 1u);
    EXPECT_EQ(static_cast<int64_t>(request.generation.videos[0].file.size() >> 10), clip_kib);
  });
  EXPECT_LT(growth_kib, clip_kib + clip_kib / 8)
      << "peak grew by " << growth_kib << " KiB for " << clip_kib << " KiB";
}

// The same on the routes that take images: /v1/responses and Ollama's chat and generate.
TEST(InlineMediaTest, PeakMemoryIsTheBodyAndTheDecodedBytesOnceOnEveryRoute) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer keeps freed blocks in quarantine: resident memory "
                  "measures that, not the parser";
#endif
  for (const MediaLayout layout : {MediaLayout::kResponses, MediaLayout::kOllamaChat,
                                   MediaLayout::kOllamaGenerate, MediaLayout::kAnthropicMessages}) {
    SCOPED_TRACE(static_cast<int>(layout));
    std::string image = Incompressible("\xff\xd8\xff");
    std::string base64 = Base64(image);
    const int64_t image_kib = static_cast<int64_t>(image.size() >> 10);
    image = std::string();
    std::string text;
    if (layout == MediaLayout::kResponses) {
      text =
          nlohmann::json{
              {"input",
               {{{"role", "user"},
                 {"content",
                  {{{"type", "input_image"}, {"image_url", "data:image/jpeg;base64," + base64}},
                   {{"type", "input_text"}, {"text", "What is this?"}}}}}}}}
              .dump();
    } else if (layout == MediaLayout::kAnthropicMessages) {
      text = User(nlohmann::json::array(
                      {{{"type", "image"},
                        {"source",
                         {{"type", "base64"}, {"media_type", "image/jpeg"}, {"data", base64}}}},
                       {{"type", "text"}, {"text", "What is this?"}}}))
                 .dump();
    } else if (layout == MediaLayout::kOllamaChat) {
      text =
          nlohmann::json{{"model", "qvl"},
                         {"messages",
                          {{{"role", "user"}, {"content", "What is this?"}, {"images", {base64}}}}}}
              .dump();
    } else {
      text = nlohmann::json{{"model", "qvl"}, {"prompt", "What is this?"}, {"images", {base64}}}
                 .dump();
    }
    base64 = std::string();
    const int64_t growth_kib = PeakGrowthKib([&] {
      InlineMedia media = TakeInlineMedia(&text, layout);
      ChatRequestPolicy policy = Policy();
      policy.media.max_image_bytes = int64_t{64} << 20;
      policy.media.inline_media = &media;
      std::vector<ImageInput> images;
      if (layout == MediaLayout::kResponses) {
        images = ParseResponsesRequest(text, policy).generation.images;
      } else if (layout == MediaLayout::kAnthropicMessages) {
        images = ParseAnthropicRequest(text, policy).generation.images;
      } else if (layout == MediaLayout::kOllamaChat) {
        images = ParseOllamaChat(text, policy).generation.images;
      } else {
        images = ParseOllamaGenerate(text, policy).generation.images;
      }
      ASSERT_EQ(images.size(), 1u);
      EXPECT_EQ(static_cast<int64_t>(images[0].bytes.size() >> 10), image_kib);
    });
    EXPECT_LT(growth_kib, image_kib + image_kib / 8)
        << "peak grew by " << growth_kib << " KiB for " << image_kib << " KiB";
  }
}

}  // namespace
}  // namespace qvl
