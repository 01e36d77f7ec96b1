// Fetches from servers on 127.0.0.1 only: loopback is refused unless the test allows
// private addresses, which is exactly the switch under test.
#include "server/image_fetcher.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/field_error.h"
#include "base/mapped_file.h"
#include "server/image_source.h"

namespace qvl {
namespace {

class ImageFetcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/image.png", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(100, 'x'), "image/png");
    });
    server_.Get("/redirect", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("/image.png");
    });
    server_.Get("/missing",
                [](const httplib::Request&, httplib::Response& res) { res.status = 404; });
    server_.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      res.set_content("late", "image/png");
    });
    // 10 x 100 bytes, one every 150 ms: a steady transfer of 1.5 s.
    server_.Get("/trickle", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("image/png", [](size_t offset, httplib::DataSink& sink) {
        if (offset >= 1000) {
          sink.done();
          return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        const std::string chunk(100, 'x');
        return sink.write(chunk.data(), chunk.size());
      });
    });
    server_.Get("/clip.mp4", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(ReadFileToString(QVL_TEST_DATA "/tiny-qwen3vl/cases/07_video_frames/frames/"
                                                     "clip.mp4"),
                      "video/mp4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the server runs: wait, or TearDown could hang in join.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    options_.allow_private_addresses = true;
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  std::string ErrorOf(const std::string& url, ErrorCode expected_code) {
    try {
      FetchImage(url, options_, "image_url.url");
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), expected_code) << e.what();
      EXPECT_EQ(e.field(), "image_url.url");
      return e.what();
    }
    return "no error";
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  ImageFetchOptions options_;
};

TEST_F(ImageFetcherTest, FetchesAndFollowsRedirects) {
  EXPECT_EQ(FetchImage(Url("/image.png"), options_, "f").size(), 100u);
  EXPECT_EQ(FetchImage(Url("/redirect"), options_, "f").size(), 100u);
}

TEST_F(ImageFetcherTest, RefusesLoopbackUnlessAllowed) {
  options_.allow_private_addresses = false;
  EXPECT_EQ(ErrorOf(Url("/image.png"), ErrorCode::kInvalidArgument),
            "image_url.url: the URL leads to 127.0.0.1, a loopback address, which this server "
            "does not fetch from");
}

TEST_F(ImageFetcherTest, EnforcesSizeTimeAndStatus) {
  options_.max_bytes = 50;
  EXPECT_EQ(ErrorOf(Url("/image.png"), ErrorCode::kTooLarge),
            "image_url.url: the image at the URL is over the limit of 50 bytes per image");
  options_.max_bytes = 1000;
  EXPECT_EQ(ErrorOf(Url("/missing"), ErrorCode::kInvalidArgument),
            "image_url.url: fetching the image got HTTP status 404");
  options_.timeout_ms = 300;
  options_.max_bytes = 8 << 20;  // 8.3 s in all: the stall ends it
  EXPECT_EQ(ErrorOf(Url("/slow"), ErrorCode::kInvalidArgument),
            "image_url.url: the server of the image sent nothing for 1 s");
  options_.max_redirects = 0;
  options_.timeout_ms = 5000;
  EXPECT_EQ(ErrorOf(Url("/redirect"), ErrorCode::kInvalidArgument),
            "image_url.url: more than 0 redirects");
}

// The timeout bounds stalls, not a transfer that keeps arriving: a 256 MB video needed
// over 200 Mbit/s to arrive within the 10 s default. The whole transfer gets the
// timeout plus its size at kMinFetchBytesPerSecond.
TEST_F(ImageFetcherTest, ASteadyTransferOutlastsTheTimeoutUpToItsSizesShare) {
  options_.timeout_ms = 1000;
  options_.max_bytes = 4 << 20;  // 1 s + 4 s in all
  EXPECT_EQ(FetchImage(Url("/trickle"), options_, "f").size(), 1000u);
  options_.max_bytes = 2000;  // 1 s + 2 ms in all
  EXPECT_EQ(ErrorOf(Url("/trickle"), ErrorCode::kInvalidArgument),
            "image_url.url: fetching the image took longer than 1.001 s, the most given to "
            "2.0 KiB");
}

TEST_F(ImageFetcherTest, OnlyHttpAndHttps) {
  EXPECT_EQ(ErrorOf("ftp://127.0.0.1/x.png", ErrorCode::kInvalidArgument),
            "image_url.url: only http:// and https:// URLs can be fetched");
}

// A video URL goes through the same fetcher under the same switches and address rules,
// bounded by the video byte limit.
TEST_F(ImageFetcherTest, VideoUrlsFollowTheImageRules) {
  MediaPolicy policy;
  policy.fetch = options_;
  const std::string field = "messages[0].content[0].video_url.url";
  auto error = [&](const std::string& url, ErrorCode code) {
    try {
      LoadVideoBytes(url, policy, field);
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.field(), field);
      return std::string(e.what()).substr(field.size() + 2);
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(Url("/clip.mp4"), ErrorCode::kInvalidArgument),
            "this server does not fetch video URLs; send the video as a data:video/...;base64 "
            "URL (the operator can enable fetching with --allow-image-urls)");
  policy.allow_urls = true;
  EXPECT_EQ(LoadVideoBytes(Url("/clip.mp4"), policy, field).size(), 80305u);
  EXPECT_EQ(
      error(Url("/image.png"), ErrorCode::kInvalidArgument),
      "not a video file qvl can read (MP4, MOV, WebM, Matroska, AVI, MPEG-TS, FLV, Ogg, GIF)");
  policy.video.max_encoded_bytes = 1000;
  EXPECT_EQ(error(Url("/clip.mp4"), ErrorCode::kTooLarge),
            "the video at the URL is over the limit of 1000 bytes per video");
  policy.fetch.allow_private_addresses = false;
  EXPECT_EQ(error(Url("/clip.mp4"), ErrorCode::kInvalidArgument),
            "the URL leads to 127.0.0.1, a loopback address, which this server does not fetch "
            "from");
}

}  // namespace
}  // namespace qvl
