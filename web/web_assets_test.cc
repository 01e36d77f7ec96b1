// Checks the page compiled into the binary against the Vite build output it was
// generated from: every file byte for byte, with the right content type.
#include "server/web_assets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

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

TEST(WebAssets, UnknownPathsAreNotFound) {
  EXPECT_EQ(FindWebAsset(""), nullptr);
  EXPECT_EQ(FindWebAsset("/missing.html"), nullptr);
  EXPECT_EQ(FindWebAsset("index.html"), nullptr);
  EXPECT_EQ(FindWebAsset("/index.html/"), nullptr);
  EXPECT_EQ(FindWebAsset("/../index.html"), nullptr);
}

}  // namespace
}  // namespace qvl
