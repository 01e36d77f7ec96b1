#include "server/inline_media.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/chat_request.h"
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
  InlineMedia media = TakeInlineMedia(&text);

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
    InlineMedia media = TakeInlineMedia(&text);
    EXPECT_EQ(text, body);
    EXPECT_EQ(media.Take("messages[0].content[0].image"), std::nullopt) << body.substr(0, 60);
  }
}

TEST(InlineMediaTest, ALaterValueOfAFieldWinsAsInTheParsedJson) {
  const std::string first = "data:image/png;base64," + Base64("first");
  const std::string second = "data:image/png;base64," + Base64("second");
  std::string text =
      R"({"messages":[{"content":[{"image":")" + first + R"(","image":")" + second + R"("}]}]})";
  InlineMedia media = TakeInlineMedia(&text);
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
  InlineMedia media = TakeInlineMedia(&text);
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
  media = TakeInlineMedia(&text);
  policy.media.inline_media = &media;
  EXPECT_EQ(error_of(text, policy), expected);
}

int64_t StatusKib(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::string(key).size()));
  }
  return -1;
}

TEST(InlineMediaTest, PeakMemoryIsTheBodyAndTheDecodedBytesOnce) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer keeps freed blocks in quarantine: resident memory "
                  "measures that, not the parser";
#endif
  // 48 MiB of "video" (an MP4 signature, then bytes that do not compress), 64 MiB as base64.
  std::string clip(size_t{48} << 20, '\0');
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (char& c : clip) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    c = static_cast<char>(state >> 56);
  }
  clip.replace(0, 8,
               std::string("\0\0\0\x18"
                           "ftyp",
                           8));
  std::string text = User({{{"type", "video_url"},
                            {"video_url", {{"url", "data:video/mp4;base64," + Base64(clip)}}}},
                           {{"type", "text"}, {"text", "What happens?"}}})
                         .dump();
  const int64_t clip_kib = static_cast<int64_t>(clip.size() >> 10);
  clip = std::string();
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";  // resets VmHWM to the current resident size
  }
  const int64_t before_kib = StatusKib("VmRSS:");
  ASSERT_LE(StatusKib("VmHWM:"), before_kib + 1024);

  InlineMedia media = TakeInlineMedia(&text);
  ChatRequestPolicy policy = Policy();
  policy.media.video.max_encoded_bytes = int64_t{64} << 20;
  policy.media.inline_media = &media;
  const ChatRequest request = ParseChatRequest(text, policy);
  ASSERT_EQ(request.generation.videos.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(request.generation.videos[0].file.size() >> 10), clip_kib);

  // Parsed as it came, the payload would also be in the JSON lexer's buffer and the parsed
  // document (64 MiB each, 176 MiB over the body in all); here the decoded bytes alone.
  const int64_t peak_growth_kib = StatusKib("VmHWM:") - before_kib;
  EXPECT_LT(peak_growth_kib, clip_kib + clip_kib / 8)
      << "peak grew by " << peak_growth_kib << " KiB for " << clip_kib << " KiB";
}

}  // namespace
}  // namespace qvl
