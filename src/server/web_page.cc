#include "server/web_page.h"

#include <algorithm>
#include <optional>
#include <string>

#ifdef QVL_HAVE_WEB_ASSETS
#include "server/web_assets.h"
#endif

namespace qvl {
namespace {

// Weights in thousandths, the precision a qvalue has.
constexpr int kFullWeight = 1000;

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return (x >= 'A' && x <= 'Z' ? x - 'A' + 'a' : x) == (y >= 'A' && y <= 'Z' ? y - 'A' + 'a' : y);
  });
}

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths.
std::optional<int> ParseQvalue(std::string_view s) {
  if (s.empty() || (s[0] != '0' && s[0] != '1')) return std::nullopt;
  int weight = s[0] == '1' ? kFullWeight : 0;
  s.remove_prefix(1);
  if (s.empty()) return weight;
  if (s[0] != '.' || s.size() > 4) return std::nullopt;
  s.remove_prefix(1);
  int scale = 100;
  for (const char c : s) {
    if (c < '0' || c > '9' || (weight == kFullWeight && c != '0')) return std::nullopt;
    weight += (c - '0') * scale;
    scale /= 10;
  }
  return weight;
}

// The weight the parameters of one Accept-Encoding element give ("q=0.5;..."): full
// without a q, none when it does not parse (raw bytes are never wrong to send).
int WeightOf(std::string_view params) {
  for (;;) {
    const size_t semicolon = params.find(';');
    const std::string_view param = TrimOws(params.substr(0, semicolon));
    if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      return ParseQvalue(param.substr(2)).value_or(0);
    }
    if (semicolon == std::string_view::npos) return kFullWeight;
    params.remove_prefix(semicolon + 1);
  }
}

}  // namespace

ContentCoding ChooseCoding(std::string_view accept_encoding, bool has_gzip, bool has_brotli) {
  std::optional<int> gzip;
  std::optional<int> brotli;
  std::optional<int> any;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding.remove_prefix(comma == std::string_view::npos ? accept_encoding.size()
                                                                  : comma + 1);
    const size_t semicolon = element.find(';');
    const std::string_view coding = TrimOws(element.substr(0, semicolon));
    const int weight =
        semicolon == std::string_view::npos ? kFullWeight : WeightOf(element.substr(semicolon + 1));
    if (EqualsIgnoringCase(coding, "gzip") || EqualsIgnoringCase(coding, "x-gzip")) {
      gzip = std::max(gzip.value_or(0), weight);
    } else if (EqualsIgnoringCase(coding, "br")) {
      brotli = std::max(brotli.value_or(0), weight);
    } else if (coding == "*") {
      any = weight;
    }
  }
  const int gzip_weight = has_gzip ? gzip.value_or(any.value_or(0)) : 0;
  const int brotli_weight = has_brotli ? brotli.value_or(any.value_or(0)) : 0;
  if (brotli_weight > 0 && brotli_weight >= gzip_weight) return ContentCoding::kBrotli;
  if (gzip_weight > 0) return ContentCoding::kGzip;
  return ContentCoding::kIdentity;
}

bool IfNoneMatchNames(std::string_view if_none_match, std::string_view etag) {
  if (etag.rfind("W/", 0) == 0) etag.remove_prefix(2);
  size_t i = 0;
  while (i < if_none_match.size()) {
    const char c = if_none_match[i];
    if (c == ' ' || c == '\t' || c == ',') {
      ++i;
      continue;
    }
    if (c == '*') return true;
    if (if_none_match.compare(i, 2, "W/") == 0) i += 2;
    // An entity tag is quoted, and may hold commas.
    if (i >= if_none_match.size() || if_none_match[i] != '"') return false;
    const size_t close = if_none_match.find('"', i + 1);
    if (close == std::string_view::npos) return false;
    if (if_none_match.substr(i, close + 1 - i) == etag) return true;
    i = close + 1;
  }
  return false;
}

#ifdef QVL_HAVE_WEB_ASSETS

bool ServeWebPage(const httplib::Request& req, httplib::Response& res) {
  const WebAsset* asset = FindWebAsset(req.path);
  if (asset == nullptr) return false;
  const bool negotiated = !asset->gzip.empty() || !asset->brotli.empty();
  std::string_view bytes = asset->body;
  std::string_view coding;
  switch (ChooseCoding(req.get_header_value("Accept-Encoding"), !asset->gzip.empty(),
                       !asset->brotli.empty())) {
    case ContentCoding::kIdentity:
      break;
    case ContentCoding::kGzip:
      bytes = asset->gzip;
      coding = "gzip";
      break;
    case ContentCoding::kBrotli:
      bytes = asset->brotli;
      coding = "br";
      break;
  }
  // Each coding is a representation of its own, so it has an ETag of its own.
  std::string etag = "\"";
  etag += asset->hash;
  if (!coding.empty()) {
    etag += '-';
    etag += coding;
  }
  etag += '"';
  const bool fingerprinted = req.path.rfind("/assets/", 0) == 0;
  res.set_header("Cache-Control",
                 fingerprinted ? "public, max-age=31536000, immutable" : "no-cache");
  res.set_header("ETag", etag);
  if (negotiated) res.set_header("Vary", "Accept-Encoding");
  res.set_header("X-Content-Type-Options", "nosniff");
  if (IfNoneMatchNames(req.get_header_value("If-None-Match"), etag)) {
    res.status = 304;
    return true;
  }
  const std::string content_type(asset->content_type);
  if (bytes.empty()) {
    res.set_content("", 0, content_type);
    return true;
  }
  if (!coding.empty()) res.set_header("Content-Encoding", std::string(coding));
  // A provider over the embedded bytes rather than set_content, which copies them for each
  // request, and whose body httplib compresses by itself, every time (Brotli at quality
  // 11 takes 0.7 s of a core for the script), ignoring q=0 and sending no Vary. The
  // status is httplib's: 200, or 206 for a Range.
  res.set_content_provider(bytes.size(), content_type,
                           [bytes](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(bytes.data() + offset, length);
                           });
  return true;
}

#else

// Built without the web page (no qvl_web_assets target): only the API is served.
bool ServeWebPage(const httplib::Request&, httplib::Response&) { return false; }

#endif

}  // namespace qvl
