// GET / and the files of the web page, served from the assets compiled into the binary
// (the qvl_web_assets library generated from web/, see web_assets.h).
#pragma once

#include <httplib.h>

#include <string>

namespace qvl {

// Answers `path` ("/" means "/index.html") from the embedded assets with cache headers
// (index.html is revalidated every time; fingerprinted files under /assets/ are
// immutable). Returns false when there is no such asset (or the binary was built
// without the page).
bool ServeWebPage(const std::string& path, httplib::Response& res);

}  // namespace qvl
