// Checks the page compiled into the binary against the Vite build output it was
// generated from: every file byte for byte, with the right content type, and each text
// file's compressed copies.
#include "server/web_assets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>

#include "server/decompress_for_test.h"

namespace qvl {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(WebAssets, EmbedsEveryBuiltFileExactly) {
  const std::filesystem::path dist = QVL_WEB_DIST;
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dist)) {
    if (!entry.is_regular_file()) continue;
    // Built up in two steps: g++ 12 warns falsely (-Wrestrict) about "/" + string.
    std::string path = "/";
    path += entry.path().lexically_relative(dist).generic_string();
    const WebAsset* asset = FindWebAsset(path);
    ASSERT_NE(asset, nullptr) << path;
    EXPECT_EQ(asset->path, path);
    EXPECT_EQ(asset->body, ReadFile(entry.path())) << path;
    ++files;
  }
  EXPECT_GE(files, 3);  // index.html, the script, the style sheet
}

TEST(WebAssets, TextFilesAreEmbeddedCompressedToo) {
  const std::filesystem::path dist = QVL_WEB_DIST;
  std::set<std::string_view> hashes;
  int compressed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dist)) {
    if (!entry.is_regular_file()) continue;
    std::string path = "/";  // in two steps, as above
    path += entry.path().lexically_relative(dist).generic_string();
    const WebAsset& asset = *FindWebAsset(path);
    EXPECT_TRUE(std::regex_match(std::string(asset.hash), std::regex("[0-9a-f]{16}"))) << path;
    EXPECT_TRUE(hashes.insert(asset.hash).second) << path << " has the hash of another file";
    const std::string type(asset.content_type);
    const bool text = type.rfind("text/", 0) == 0 || type == "image/svg+xml";
    if (!text) {  // fonts and pictures are compressed already
      EXPECT_TRUE(asset.gzip.empty()) << path;
      EXPECT_TRUE(asset.brotli.empty()) << path;
      continue;
    }
    ASSERT_FALSE(asset.gzip.empty()) << path;
    ASSERT_FALSE(asset.brotli.empty()) << path;
    EXPECT_TRUE(GunzipForTest(asset.gzip) == asset.body) << path;
    EXPECT_TRUE(UnbrotliForTest(asset.brotli) == asset.body) << path;
    EXPECT_LT(asset.gzip.size(), asset.body.size()) << path;
    EXPECT_LT(asset.brotli.size(), asset.gzip.size()) << path;
    ++compressed;
  }
  EXPECT_GE(compressed, 4);  // index.html, the script, the style sheet, the icon
}

TEST(WebAssets, RootIsTheIndexPageAndItsScriptAndStyleExist) {
  const WebAsset* root = FindWebAsset("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, FindWebAsset("/index.html"));
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  const std::string html(root->body);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);

  std::smatch script;
  ASSERT_TRUE(std::regex_search(html, script, std::regex(R"(src="(/assets/[^"]+\.js)\")")));
  const WebAsset* js = FindWebAsset(script[1].str());
  ASSERT_NE(js, nullptr) << script[1];
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_GT(js->body.size(), 1000u);

  std::smatch style;
  ASSERT_TRUE(std::regex_search(html, style, std::regex(R"(href="(/assets/[^"]+\.css)\")")));
  const WebAsset* css = FindWebAsset(style[1].str());
  ASSERT_NE(css, nullptr) << style[1];
  EXPECT_EQ(css->content_type, "text/css; charset=utf-8");

  const WebAsset* icon = FindWebAsset("/favicon.svg");
  ASSERT_NE(icon, nullptr);
  EXPECT_EQ(icon->content_type, "image/svg+xml");
}

// Code colours and maths are chunks the script imports on first use (src/lazy_modules.ts),
// possibly long after the page loaded: each must be in the binary, or those answers stay
// plain.
TEST(WebAssets, ChunksTheScriptLoadsLaterAreEmbedded) {
  const std::string html(FindWebAsset("/")->body);
  std::smatch script;
  ASSERT_TRUE(std::regex_search(html, script, std::regex(R"(src="(/assets/[^"]+\.js)\")")));
  const std::string js(FindWebAsset(script[1].str())->body);
  const std::regex chunk(R"re(import\("\./([^"]+\.js)"\))re");
  int chunks = 0;
  for (std::sregex_iterator it(js.begin(), js.end(), chunk), end; it != end; ++it) {
    std::string path = "/assets/";  // in two steps, as above
    path += (*it)[1].str();
    const WebAsset* asset = FindWebAsset(path);
    ASSERT_NE(asset, nullptr) << path;
    EXPECT_EQ(asset->content_type, "text/javascript; charset=utf-8");
    ++chunks;
  }
  EXPECT_GE(chunks, 2);  // highlight.js, KaTeX
  const std::regex style(R"re("(assets/[^"]+\.css)")re");
  for (std::sregex_iterator it(js.begin(), js.end(), style), end; it != end; ++it) {
    std::string path = "/";
    path += (*it)[1].str();
    EXPECT_NE(FindWebAsset(path), nullptr) << path;
  }
}

TEST(WebAssets, UnknownPathsAreNotFound) {
  EXPECT_EQ(FindWebAsset(""), nullptr);
  EXPECT_EQ(FindWebAsset("/missing.html"), nullptr);
  EXPECT_EQ(FindWebAsset("index.html"), nullptr);
  EXPECT_EQ(FindWebAsset("/index.html/"), nullptr);
  EXPECT_EQ(FindWebAsset("/../index.html"), nullptr);
}

}  // namespace
}  // namespace qvl
