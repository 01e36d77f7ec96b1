// GET / and the files of the web page, served from the assets compiled into the binary
// (the qvl_web_assets library generated from web/, see web_assets.h).
#pragma once

#include <httplib.h>

#include <string_view>

namespace qvl {

// Answers a GET or HEAD of `req.path` ("/" means "/index.html") from the embedded assets:
// compressed (Brotli or gzip) when the request's Accept-Encoding allows it, the raw bytes
// otherwise, each with its own ETag, and 304 when If-None-Match names the one it would
// send. index.html is revalidated every time; fingerprinted files under /assets/ are
// immutable. Returns false when there is no such asset (or the binary was built without
// the page).
bool ServeWebPage(const httplib::Request& req, httplib::Response& res);

enum class ContentCoding { kIdentity, kGzip, kBrotli };

// The coding an Accept-Encoding value prefers among those a file has (RFC 9110, 12.5.3):
// the highest weight above 0, its own or else that of "*" ("x-gzip" is gzip), Brotli on a
// tie (it is smaller); identity when neither is allowed, as for a missing or empty header,
// "identity", "gzip;q=0", or a weight that does not parse.
ContentCoding ChooseCoding(std::string_view accept_encoding, bool has_gzip, bool has_brotli);

// Whether an If-None-Match value names `etag` (weak comparison: W/ is ignored) or is "*".
bool IfNoneMatchNames(std::string_view if_none_match, std::string_view etag);

}  // namespace qvl
