// Video parts of chat messages: the frame-list form of qwen-vl-utils and vLLM, and
// video files as vLLM's video_url; what is refused names the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/chat_messages.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

using ::qvl::testing::Base64;
using ::qvl::testing::ReadFile;

std::string Frame(int k) {
  char name[32];
  std::snprintf(name, sizeof(name), "/frames/clip/%03d.png", k);
  return "data:image/png;base64," + Base64(ReadFile(kCases + "/07_video_frames" + name));
}

std::string Mp4Url() {
  return "data:video/mp4;base64," + Base64(ReadFile(kCases + "/07_video_frames/frames/clip.mp4"));
}

struct Parsed {
  std::vector<ChatMessage> messages;
  std::vector<ImageInput> images;
  std::vector<VideoInput> videos;
};

Parsed Parse(const nlohmann::json& content, const std::string& role = "user",
             MessageLimits limits = {}) {
  Parsed p;
  const nlohmann::json messages = {{{"role", role}, {"content", content}}};
  ParseChatMessages(messages, limits, &p.messages, &p.images, &p.videos);
  return p;
}

// The field and message of the error parsing `content` throws.
std::pair<std::string, std::string> ErrorOf(const nlohmann::json& content,
                                            const std::string& role = "user",
                                            MessageLimits limits = {}) {
  try {
    Parse(content, role, limits);
  } catch (const FieldError& e) {
    return {e.field(), e.what()};
  }
  return {"", "no error"};
}

TEST(ChatMessagesVideo, FrameListWithItsRate) {
  nlohmann::json frames = nlohmann::json::array();
  for (int k = 0; k < 8; ++k) frames.push_back(Frame(k));
  const Parsed p = Parse({{{"type", "video"}, {"video", frames}, {"fps", 4.0}},
                          {{"type", "text"}, {"text", "What moves?"}}});
  ASSERT_EQ(p.videos.size(), 1u);
  EXPECT_EQ(p.videos[0].frames.size(), 8u);
  EXPECT_EQ(p.videos[0].fps, 4.0);
  EXPECT_TRUE(p.videos[0].file.empty());
  EXPECT_EQ(p.videos[0].name, "video 1 (messages[0].content[0])");
  EXPECT_EQ(p.videos[0].sample_fps, 0.0);  // the model's
  EXPECT_EQ(p.videos[0].max_frames, 0);
  ASSERT_EQ(p.messages[0].parts.size(), 2u);
  EXPECT_EQ(p.messages[0].parts[0].kind, ChatPart::Kind::kVideo);

  // Without fps the timestamps would be guessed: refused.
  const auto [field, message] = ErrorOf({{{"type", "video"}, {"video", frames}}});
  EXPECT_EQ(field, "messages[0].content[0].fps");
  EXPECT_NE(message.find("is required with a list of frames"), std::string::npos) << message;

  MessageLimits few;
  few.media.video.max_input_frames = 4;
  EXPECT_EQ(ErrorOf({{{"type", "video"}, {"video", frames}, {"fps", 4}}}, "user", few).first,
            "messages[0].content[0].video");
  frames[3] = 7;
  EXPECT_EQ(ErrorOf({{{"type", "video"}, {"video", frames}, {"fps", 4}}}).first,
            "messages[0].content[0].video[3]");
  // A frame's bytes are loaded, not decoded: their format is the engine's to check.
  frames[3] = "data:image/png;base64,AAAA";
  const Parsed loaded = Parse({{{"type", "video"}, {"video", frames}, {"fps", 4}}});
  ASSERT_EQ(loaded.videos.size(), 1u);
  EXPECT_EQ(loaded.videos[0].frames[3], std::vector<uint8_t>(3, 0));
}

TEST(ChatMessagesVideo, VideoFilesAsVideoUrlOrVideo) {
  const std::string mp4 = ReadFile(kCases + "/07_video_frames/frames/clip.mp4");
  Parsed p = Parse({{{"type", "video_url"}, {"video_url", {{"url", Mp4Url()}}}}});
  ASSERT_EQ(p.videos.size(), 1u);
  EXPECT_EQ(p.videos[0].file.size(), mp4.size());
  EXPECT_TRUE(p.videos[0].frames.empty());
  p = Parse({{{"video", Mp4Url()}, {"fps", 1}, {"max_frames", 6}}});  // type from the key
  ASSERT_EQ(p.videos.size(), 1u);
  EXPECT_EQ(p.videos[0].file.size(), mp4.size());
  EXPECT_EQ(p.videos[0].sample_fps, 1.0);  // a file's fps is the rate to sample at
  EXPECT_EQ(p.videos[0].max_frames, 6);
  EXPECT_EQ(ErrorOf({{{"video", Mp4Url()}, {"max_frames", 1}}}).first,
            "messages[0].content[0].max_frames");
  EXPECT_EQ(ErrorOf({{{"video", Mp4Url()}, {"fps", 0}}}).first, "messages[0].content[0].fps");

  EXPECT_EQ(ErrorOf({{{"type", "video_url"}, {"video_url", {{"url", Frame(0)}}}}}),
            std::make_pair(std::string("messages[0].content[0].video_url.url"),
                           std::string("messages[0].content[0].video_url.url: the data URL "
                                       "holds image/png, not a video")));
  EXPECT_EQ(
      ErrorOf({{{"type", "video_url"}, {"video_url", {{"url", "data:video/mp4;base64,AAAAAAAA"}}}}})
          .second,
      "messages[0].content[0].video_url.url: not a video file qvl can read (MP4, MOV, "
      "WebM, Matroska, AVI, MPEG-TS, FLV, Ogg, GIF)");
  MessageLimits small;
  small.media.video.max_encoded_bytes = 1000;
  const auto [field, message] =
      ErrorOf({{{"type", "video_url"}, {"video_url", {{"url", Mp4Url()}}}}}, "user", small);
  EXPECT_EQ(field, "messages[0].content[0].video_url.url");
  EXPECT_NE(message.find("over the limit of"), std::string::npos) << message;
}

TEST(ChatMessagesVideo, RefusedWhereTheTemplateDropsThemAndOverTheCount) {
  const nlohmann::json part = {{"type", "video_url"}, {"video_url", {{"url", Mp4Url()}}}};
  EXPECT_EQ(ErrorOf(nlohmann::json::array({part}), "assistant").first, "messages[0].content[0]");
  MessageLimits one;
  one.media.video.max_videos_per_request = 1;
  EXPECT_EQ(ErrorOf({part, part}, "user", one).first, "messages[0].content[1]");
  // A front end that does not pass videos keeps refusing them.
  std::vector<ChatMessage> messages;
  std::vector<ImageInput> images;
  try {
    const nlohmann::json request =
        nlohmann::json::array({{{"role", "user"}, {"content", nlohmann::json::array({part})}}});
    ParseChatMessages(request, {}, &messages, &images);
    ADD_FAILURE() << "no error";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "messages[0].content[0].type");
  }
}

// qwen-vl-utils' per-video keys: frame counts, and sizes per frame or over all frame
// pairs (total_pixels counts frames / 2 x H x W: a video token is 32 x 32 of it).
TEST(ChatMessagesVideo, QwenVlUtilsSamplingAndSizeKeys) {
  MessageLimits limits;
  limits.pixels_per_image_token = 32 * 32;
  limits.pixels_per_video_token = 2 * 32 * 32;
  Parsed p = Parse({{{"video", Mp4Url()},
                     {"nframes", 6},
                     {"min_frames", 4},
                     {"max_frames", 8},
                     {"min_pixels", 64 * 64},
                     {"max_pixels", 320 * 240},
                     {"total_pixels", 1024 * 32 * 32}}},
                   "user", limits);
  ASSERT_EQ(p.videos.size(), 1u);
  const VideoInput& v = p.videos[0];
  EXPECT_EQ(v.num_frames, 6);
  EXPECT_EQ(v.min_frames, 4);
  EXPECT_EQ(v.max_frames, 8);
  EXPECT_EQ(v.budget.min_frame_pixels, 64 * 64);
  EXPECT_EQ(v.budget.max_frame_pixels, 320 * 240);
  EXPECT_EQ(v.budget.max_pixels, 2 * 1024 * 32 * 32);  // 1024 tokens over all frames
  EXPECT_EQ(v.budget.min_pixels, 0);

  const std::string at = "messages[0].content[0].";
  auto error = [&](const nlohmann::json& part) {
    return ErrorOf(nlohmann::json::array({part}), "user", limits);
  };
  EXPECT_EQ(
      error({{"video", Mp4Url()}, {"fps", 1}, {"nframes", 4}}),
      std::make_pair(at + "nframes", at + "nframes: and fps are mutually exclusive; give one"));
  EXPECT_EQ(error({{"video", Mp4Url()}, {"min_frames", 9}, {"max_frames", 8}}).first,
            at + "min_frames");
  EXPECT_EQ(error({{"video", Mp4Url()}, {"min_pixels", 9000}, {"max_pixels", 8000}}).first,
            at + "min_pixels");
  EXPECT_EQ(error({{"video", Mp4Url()}, {"max_pixels", -5}}).first, at + "max_pixels");
  EXPECT_EQ(error({{"video", Mp4Url()}, {"total_pixels", "big"}}).first, at + "total_pixels");
  EXPECT_EQ(error({{"video", Mp4Url()}, {"nframes", 1}}).first, at + "nframes");
  const auto [field, message] = error({{"video", Mp4Url()}, {"resized_height", 224}});
  EXPECT_EQ(field, at + "resized_height");
  EXPECT_NE(message.find("fixed video frame size is not supported"), std::string::npos);
}

}  // namespace
}  // namespace qvl
