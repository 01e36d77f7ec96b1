// The page as a browser gets it over HTTP: compressed when the request allows it, raw
// otherwise, each coding revalidated by its own ETag.
#include "server/web_page.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "server/decompress_for_test.h"
#include "server/web_assets.h"

namespace qvl {
namespace {

constexpr char kBrowserEncodings[] = "gzip, deflate, br, zstd";

TEST(ChooseCoding, ReadsWeightsAndWildcards) {
  const auto choose = [](std::string_view accept_encoding) {
    return ChooseCoding(accept_encoding, true, true);
  };
  for (const char* brotli : {"br", "gzip, deflate, br, zstd", "BR", "*", "gzip;q=0.5, br",
                             "gzip, br", "br;q=0.001", "*;q=0, br", "identity;q=0, *;q=0.2"}) {
    EXPECT_EQ(choose(brotli), ContentCoding::kBrotli) << brotli;
  }
  for (const char* gzip :
       {"gzip", "gzip, deflate", "GZip", "x-gzip", "br;q=0.5, gzip", "gzip ; q=0.001", "br;q=0, *",
        "gzip;level=9;q=1, br;q=0.999", "gzip;q=0, x-gzip;q=1, br;q=0", "*, br;q=0"}) {
    EXPECT_EQ(choose(gzip), ContentCoding::kGzip) << gzip;
  }
  for (const char* identity :
       {"", "identity", "deflate, zstd", "gzip;q=0", "gzip; q=0.000, br;q=0", "GZIP;Q=0", "*;q=0",
        "*, gzip;q=0, br;q=0", "gzip;q=1.5", "gzip;q=0.0001", "gzip;q=high",
        "gzip;q=", "gzipped, brotli", "x-gzip2", "identity;q=0"}) {
    EXPECT_EQ(choose(identity), ContentCoding::kIdentity) << identity;
  }
  // Only the codings the file has.
  EXPECT_EQ(ChooseCoding("gzip, br", true, false), ContentCoding::kGzip);
  EXPECT_EQ(ChooseCoding("br", true, false), ContentCoding::kIdentity);
  EXPECT_EQ(ChooseCoding("gzip, br", false, false), ContentCoding::kIdentity);
}

TEST(IfNoneMatchNames, ComparesEntityTagsWeakly) {
  EXPECT_TRUE(IfNoneMatchNames(R"("abc")", R"("abc")"));
  EXPECT_TRUE(IfNoneMatchNames(R"(W/"abc")", R"("abc")"));
  EXPECT_TRUE(IfNoneMatchNames(R"("x", W/"abc")", R"("abc")"));
  EXPECT_TRUE(IfNoneMatchNames(R"("a,b" ,"abc")", R"("abc")"));
  EXPECT_TRUE(IfNoneMatchNames("*", R"("abc")"));
  EXPECT_FALSE(IfNoneMatchNames("", R"("abc")"));
  EXPECT_FALSE(IfNoneMatchNames(R"("abc-gzip")", R"("abc")"));
  EXPECT_FALSE(IfNoneMatchNames(R"("ab")", R"("abc")"));
  EXPECT_FALSE(IfNoneMatchNames("abc", R"("abc")"));
  EXPECT_FALSE(IfNoneMatchNames(R"("abc)", R"("abc")"));
}

class WebPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
      if (!ServeWebPage(req, res)) res.status = 404;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();

    const std::string html(FindWebAsset("/")->body);
    std::smatch script;
    ASSERT_TRUE(std::regex_search(html, script, std::regex(R"(src="(/assets/[^"]+\.js)\")")));
    script_path_ = script[1].str();
    script_ = FindWebAsset(script_path_);
    ASSERT_NE(script_, nullptr);
  }

  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  // The response's bytes as sent: the client neither asks for nor inflates any coding.
  httplib::Result Get(const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", port_);
    client.set_decompress(false);
    return client.Get(path, headers);
  }

  httplib::Result Head(const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", port_);
    client.set_decompress(false);
    return client.Head(path, headers);
  }

  // `coding`: "", "gzip" or "br".
  static std::string ETag(const WebAsset& asset, const std::string& coding) {
    // Built up in steps: g++ 12 warns falsely (-Wrestrict) about "\"" + string.
    std::string etag = "\"";
    etag += asset.hash;
    if (!coding.empty()) {
      etag += '-';
      etag += coding;
    }
    etag += '"';
    return etag;
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::string script_path_;
  const WebAsset* script_ = nullptr;
};

TEST_F(WebPageTest, SendsTheScriptCompressedToABrowser) {
  const httplib::Result res = Get(script_path_, {{"Accept-Encoding", kBrowserEncodings}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "br");
  EXPECT_EQ(res->get_header_value("Vary"), "Accept-Encoding");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(res->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(res->get_header_value("ETag"), ETag(*script_, "br"));
  EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(script_->brotli.size()));
  EXPECT_TRUE(res->body == script_->brotli);
  EXPECT_TRUE(UnbrotliForTest(res->body) == script_->body);
  EXPECT_LT(res->body.size(), script_->body.size() / 3);
}

// A phone on the local network: browsers offer Brotli on https and localhost only.
TEST_F(WebPageTest, SendsGzipWhereBrotliIsNotOffered) {
  const httplib::Result res = Get(script_path_, {{"Accept-Encoding", "gzip, deflate"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(res->get_header_value("Vary"), "Accept-Encoding");
  EXPECT_EQ(res->get_header_value("ETag"), ETag(*script_, "gzip"));
  EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(script_->gzip.size()));
  EXPECT_TRUE(res->body == script_->gzip);
  EXPECT_TRUE(GunzipForTest(res->body) == script_->body);
  EXPECT_LT(res->body.size(), script_->body.size() / 2);
}

TEST_F(WebPageTest, SendsRawBytesWhenNoCodingIsAccepted) {
  for (const char* accepts : {"", "identity", "gzip;q=0", "gzip;q=0, br;q=0", "deflate", "*;q=0"}) {
    httplib::Headers headers;
    if (*accepts != '\0') headers.emplace("Accept-Encoding", accepts);
    const httplib::Result res = Get(script_path_, headers);
    ASSERT_TRUE(res) << accepts;
    EXPECT_EQ(res->status, 200) << accepts;
    EXPECT_FALSE(res->has_header("Content-Encoding")) << accepts;
    // A cache must still know that another request may get other bytes.
    EXPECT_EQ(res->get_header_value("Vary"), "Accept-Encoding") << accepts;
    EXPECT_EQ(res->get_header_value("ETag"), ETag(*script_, "")) << accepts;
    EXPECT_TRUE(res->body == script_->body) << accepts;
  }
}

TEST_F(WebPageTest, HeadSaysWhatGetWouldSend) {
  for (const std::string coding : {"br", "gzip", ""}) {
    httplib::Headers headers;
    if (!coding.empty()) headers.emplace("Accept-Encoding", coding);
    const httplib::Result res = Head(script_path_, headers);
    ASSERT_TRUE(res) << coding;
    EXPECT_EQ(res->status, 200) << coding;
    EXPECT_EQ(res->get_header_value("Content-Encoding"), coding) << coding;
    const std::string_view bytes = coding == "br"     ? script_->brotli
                                   : coding == "gzip" ? script_->gzip
                                                      : script_->body;
    EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(bytes.size())) << coding;
    EXPECT_EQ(res->get_header_value("ETag"), ETag(*script_, coding)) << coding;
    EXPECT_EQ(res->body, "") << coding;
  }
}

TEST_F(WebPageTest, RevalidatesEachCodingByItsOwnETag) {
  const WebAsset& page = *FindWebAsset("/index.html");
  ASSERT_FALSE(page.gzip.empty());
  ASSERT_FALSE(page.brotli.empty());

  for (const std::string coding : {"br", "gzip"}) {
    const httplib::Result same =
        Get("/", {{"Accept-Encoding", coding}, {"If-None-Match", ETag(page, coding)}});
    ASSERT_TRUE(same) << coding;
    EXPECT_EQ(same->status, 304) << coding;
    EXPECT_EQ(same->body, "") << coding;
    EXPECT_EQ(same->get_header_value("ETag"), ETag(page, coding)) << coding;
    EXPECT_EQ(same->get_header_value("Vary"), "Accept-Encoding") << coding;
    EXPECT_EQ(same->get_header_value("Cache-Control"), "no-cache") << coding;
    EXPECT_FALSE(same->has_header("Content-Encoding")) << coding;
  }

  // A stored copy in another coding is not the one this request selects.
  const httplib::Result other =
      Get("/", {{"Accept-Encoding", "gzip"}, {"If-None-Match", ETag(page, "br")}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  EXPECT_EQ(other->get_header_value("ETag"), ETag(page, "gzip"));
  EXPECT_TRUE(GunzipForTest(other->body) == page.body);

  const std::string raw = ETag(page, "");
  for (const std::string& tags : {raw, std::string("W/").append(raw),
                                  std::string("\"old\", ").append(raw), std::string("*")}) {
    const httplib::Result res = Get("/index.html", {{"If-None-Match", tags}});
    ASSERT_TRUE(res) << tags;
    EXPECT_EQ(res->status, 304) << tags;
    EXPECT_EQ(res->get_header_value("ETag"), raw) << tags;
  }
  const httplib::Result changed = Get("/index.html", {{"If-None-Match", "\"0123456789abcdef\""}});
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->status, 200);
  EXPECT_TRUE(changed->body == page.body);
}

TEST_F(WebPageTest, FontsAreSentAsBuilt) {
  std::string font;
  for (const auto& entry : std::filesystem::directory_iterator(QVL_WEB_DIST "/assets")) {
    if (entry.path().extension() == ".woff2")
      font = std::string("/assets/").append(entry.path().filename().string());
  }
  ASSERT_FALSE(font.empty());
  const WebAsset* asset = FindWebAsset(font);
  ASSERT_NE(asset, nullptr);
  const httplib::Result res = Get(font, {{"Accept-Encoding", kBrowserEncodings}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "font/woff2");
  EXPECT_FALSE(res->has_header("Content-Encoding"));
  EXPECT_FALSE(res->has_header("Vary"));
  EXPECT_EQ(res->get_header_value("ETag"), ETag(*asset, ""));
  EXPECT_TRUE(res->body == asset->body);
}

TEST_F(WebPageTest, ARangeIsPartialContent) {
  const httplib::Result res = Get(script_path_, {{"Range", "bytes=0-99"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 206);
  EXPECT_EQ(res->get_header_value("Content-Range"),
            "bytes 0-99/" + std::to_string(script_->body.size()));
  EXPECT_TRUE(res->body == script_->body.substr(0, 100));
}

TEST_F(WebPageTest, UnknownPathsAreLeftToTheCaller) {
  const httplib::Result res = Get("/assets/no-such-file.js");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

}  // namespace
}  // namespace qvl
