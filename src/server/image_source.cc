#include "server/image_source.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "base/field_error.h"
#include "server/base64.h"
#include "server/byte_size.h"

namespace qvl {
namespace {

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string Lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// data:[<media type>][;param=value]*;base64,<payload>
std::vector<uint8_t> DecodeDataUrl(std::string_view url, int64_t max_bytes,
                                   std::string_view field) {
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    FailField(ErrorCode::kInvalidArgument, field, "malformed data URL: no ',' after the header");
  }
  const std::string header = Lower(url.substr(5, comma - 5));
  const std::string_view payload = url.substr(comma + 1);
  if (header.size() < 7 || header.compare(header.size() - 7, 7, ";base64") != 0) {
    FailField(ErrorCode::kInvalidArgument, field,
              "only base64 data URLs are supported (data:image/png;base64,...)");
  }
  const std::string media_type = header.substr(0, header.find(';'));
  if (!media_type.empty() && media_type.rfind("image/", 0) != 0 &&
      media_type != "application/octet-stream") {
    FailField(ErrorCode::kInvalidArgument, field, "the data URL holds ", media_type,
              ", not an image");
  }
  const size_t size = Base64DecodedSize(payload);
  if (static_cast<int64_t>(size) > max_bytes) {
    FailField(ErrorCode::kTooLarge, field, "the image is ",
              FormatByteSize(static_cast<int64_t>(size)), ", over the limit of ",
              FormatByteSize(max_bytes), " per image");
  }
  return DecodeBase64(payload, field);
}

}  // namespace

std::vector<uint8_t> LoadImageBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field) {
  std::vector<uint8_t> bytes;
  if (StartsWithNoCase(reference, "data:")) {
    bytes = DecodeDataUrl(reference, policy.max_image_bytes, field);
  } else if (StartsWithNoCase(reference, "http://") || StartsWithNoCase(reference, "https://")) {
    if (!policy.allow_urls) {
      FailField(ErrorCode::kInvalidArgument, field,
                "this server does not fetch image URLs; send the image as a "
                "data:image/...;base64 URL (the operator can enable fetching with "
                "--allow-image-urls)");
    }
    ImageFetchOptions fetch = policy.fetch;
    fetch.max_bytes = policy.max_image_bytes;
    bytes = FetchImage(std::string(reference), fetch, field);
  } else if (reference.find("://") != std::string_view::npos &&
             !StartsWithNoCase(reference, "file://")) {
    FailField(ErrorCode::kInvalidArgument, field, "unsupported URL scheme in ",
              reference.substr(0, reference.find("://") + 3),
              "; use a data: URL, an http(s) URL or a file path");
  } else {
    bytes = ReadLocalMedia(reference, policy.local, policy.max_image_bytes, field);
  }
  return bytes;
}

}  // namespace qvl
