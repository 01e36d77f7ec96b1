// The files of the web page (web/), compiled into the binary so that `qvl serve` needs
// nothing installed beside it. The library qvl_web_assets implements this header with
// a source file that web/CMakeLists.txt generates from the page's build output.
#pragma once

#include <string_view>

namespace qvl {

struct WebAsset {
  std::string_view path;          // "/index.html", "/assets/app-1a2b3c4d.js"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;          // the file's bytes, exactly as built
  // The same bytes compressed at build time (web/compress_asset.cc), for browsers that
  // accept it; empty for files it would not make smaller (fonts, images).
  std::string_view gzip;
  std::string_view brotli;
  std::string_view hash;  // 16 hex digits of the body's SHA-256: names this version in ETags
};

// The asset served at `path` ("/" is "/index.html"), or nullptr when there is none.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace qvl
