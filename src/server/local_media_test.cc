#include "server/local_media.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/field_error.h"

namespace qvl {
namespace {

namespace fs = std::filesystem;

class LocalMediaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/qvl_local_media_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    top_ = pattern;
    root_ = top_ / "media";
    fs::create_directories(root_ / "sub");
    Write(root_ / "a.png", "inside");
    Write(root_ / "sub" / "b.png", "nested");
    Write(top_ / "secret.png", "outside");
    fs::create_symlink(top_ / "secret.png", root_ / "escape.png");
    fs::create_symlink(root_ / "a.png", root_ / "alias.png");
    policy_.enabled = true;
    policy_.root = root_.string();
  }
  void TearDown() override { fs::remove_all(top_); }

  static void Write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  std::string Read(const std::string& path, int64_t max_bytes = 1000) {
    const std::vector<uint8_t> bytes = ReadLocalMedia(path, policy_, max_bytes, "url");
    return std::string(bytes.begin(), bytes.end());
  }

  std::string ErrorOf(const std::string& path, ErrorCode expected_code, int64_t max_bytes = 1000) {
    try {
      ReadLocalMedia(path, policy_, max_bytes, "messages[0].content[0].image_url.url");
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), expected_code) << e.what();
      return e.what();
    }
    return "no error";
  }

  fs::path top_;
  fs::path root_;
  LocalMediaPolicy policy_;
};

TEST_F(LocalMediaTest, ReadsFilesInsideTheRoot) {
  EXPECT_EQ(Read("a.png"), "inside");
  EXPECT_EQ(Read("sub/b.png"), "nested");
  EXPECT_EQ(Read((root_ / "a.png").string()), "inside");
  EXPECT_EQ(Read("file://" + (root_ / "sub" / "b.png").string()), "nested");
  EXPECT_EQ(Read("alias.png"), "inside");  // a symlink that stays inside is fine
}

TEST_F(LocalMediaTest, RelativePathsFollowTheBaseFolder) {
  policy_.base_dir = (root_ / "sub").string();
  EXPECT_EQ(Read("b.png"), "nested");
}

TEST_F(LocalMediaTest, RefusesEverythingOutsideTheRoot) {
  const std::string prefix = "messages[0].content[0].image_url.url: ";
  EXPECT_EQ(ErrorOf("../secret.png", ErrorCode::kInvalidArgument),
            prefix + "'..' is not allowed in file paths");
  EXPECT_EQ(ErrorOf("sub/../a.png", ErrorCode::kInvalidArgument),
            prefix + "'..' is not allowed in file paths");
  EXPECT_EQ(ErrorOf("escape.png", ErrorCode::kInvalidArgument),
            prefix + "escape.png is outside the folder this server allows media from");
  const std::string secret = (top_ / "secret.png").string();
  EXPECT_EQ(ErrorOf(secret, ErrorCode::kInvalidArgument),
            prefix + secret + " is outside the folder this server allows media from");
  EXPECT_EQ(ErrorOf("/etc/passwd", ErrorCode::kInvalidArgument),
            prefix + "/etc/passwd is outside the folder this server allows media from");
  EXPECT_EQ(ErrorOf("file://etc/passwd", ErrorCode::kInvalidArgument),
            prefix +
                "file:// URLs must name an absolute path on this machine "
                "(file:///dir/image.png)");
}

TEST_F(LocalMediaTest, ReportsMissingLargeAndOddFiles) {
  const std::string prefix = "messages[0].content[0].image_url.url: ";
  EXPECT_EQ(ErrorOf("nope.png", ErrorCode::kNotFound), prefix + "no such file: nope.png");
  EXPECT_EQ(ErrorOf("a.png", ErrorCode::kTooLarge, 3),
            prefix + "the file is 6 bytes, over the limit of 3 bytes per image");
  EXPECT_EQ(ErrorOf("sub", ErrorCode::kInvalidArgument), prefix + "sub is not a regular file");
}

TEST_F(LocalMediaTest, OffUnlessEnabled) {
  policy_.enabled = false;
  EXPECT_EQ(ErrorOf("a.png", ErrorCode::kInvalidArgument),
            "messages[0].content[0].image_url.url: local files are not allowed on this server; "
            "send the image as a data:image/...;base64 URL (the operator can allow a folder "
            "with --allowed-local-media DIR)");
  EXPECT_THROW(
      {
        try {
          ReadLocalMedia("clip.mp4", policy_, 100, "video_url.url", "video");
        } catch (const FieldError& e) {
          EXPECT_NE(std::string(e.what()).find("send the video as a data:video/...;base64 URL"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      FieldError);
}

TEST_F(LocalMediaTest, WithoutRootAnyFileIsReadable) {
  policy_.root.clear();
  policy_.base_dir = root_.string();
  EXPECT_EQ(Read("escape.png"), "outside");
  EXPECT_EQ(Read((top_ / "secret.png").string()), "outside");
}

}  // namespace
}  // namespace qvl
