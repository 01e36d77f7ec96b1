#include "server/web_page.h"

#ifdef QVL_HAVE_WEB_ASSETS
#include "server/web_assets.h"
#endif

namespace qvl {

#ifdef QVL_HAVE_WEB_ASSETS

bool ServeWebPage(const std::string& path, httplib::Response& res) {
  const WebAsset* asset = FindWebAsset(path);
  if (asset == nullptr) return false;
  const bool fingerprinted = path.rfind("/assets/", 0) == 0;
  res.set_header("Cache-Control",
                 fingerprinted ? "public, max-age=31536000, immutable" : "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.status = 200;
  res.set_content(asset->body.data(), asset->body.size(), std::string(asset->content_type));
  return true;
}

#else

// Built without the web page (no qvl_web_assets target): only the API is served.
bool ServeWebPage(const std::string&, httplib::Response&) { return false; }

#endif

}  // namespace qvl
