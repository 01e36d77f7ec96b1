#include "server/image_source.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "base/field_error.h"
#include "image/video_decoder.h"
#include "server/base64.h"
#include "server/byte_size.h"
#include "server/inline_media.h"

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

// What a media loader accepts: "image" or "video" (the data URL's media type prefix and
// the noun of its messages) and how many bytes.
struct MediaKind {
  std::string_view noun;
  int64_t max_bytes;
};

// data:[<media type>][;param=value]*;base64,<payload>
std::vector<uint8_t> DecodeDataUrl(std::string_view url, const MediaKind& kind,
                                   InlineMedia* inline_media, std::string_view field) {
  const int64_t max_bytes = kind.max_bytes;
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
  if (!media_type.empty() && media_type.rfind(StrCat(kind.noun, "/"), 0) != 0 &&
      media_type != "application/octet-stream") {
    FailField(ErrorCode::kInvalidArgument, field, "the data URL holds ", media_type, ", not ",
              kind.noun == "image" ? "an image" : "a video");
  }
  std::optional<std::vector<uint8_t>> taken;
  if (payload.empty() && inline_media != nullptr) taken = inline_media->Take(field);
  const size_t size = taken ? taken->size() : Base64DecodedSize(payload);
  if (static_cast<int64_t>(size) > max_bytes) {
    FailField(ErrorCode::kTooLarge, field, "the ", kind.noun, " is ",
              FormatByteSize(static_cast<int64_t>(size)), ", over the limit of ",
              FormatByteSize(max_bytes), " per ", kind.noun);
  }
  return taken ? std::move(*taken) : DecodeBase64(payload, field);
}

// The bytes `reference` names, from a data URL, an http(s) URL or a local file.
std::vector<uint8_t> LoadMediaBytes(std::string_view reference, const MediaPolicy& policy,
                                    const MediaKind& kind, std::string_view field) {
  if (StartsWithNoCase(reference, "data:")) {
    return DecodeDataUrl(reference, kind, policy.inline_media, field);
  }
  if (StartsWithNoCase(reference, "http://") || StartsWithNoCase(reference, "https://")) {
    if (!policy.allow_urls) {
      FailField(ErrorCode::kInvalidArgument, field, "this server does not fetch ", kind.noun,
                " URLs; send the ", kind.noun, " as a data:", kind.noun,
                "/...;base64 URL (the operator can enable fetching with --allow-image-urls)");
    }
    ImageFetchOptions fetch = policy.fetch;
    fetch.max_bytes = kind.max_bytes;
    fetch.noun = kind.noun;
    return FetchImage(std::string(reference), fetch, field);
  }
  if (reference.find("://") != std::string_view::npos && !StartsWithNoCase(reference, "file://")) {
    FailField(ErrorCode::kInvalidArgument, field, "unsupported URL scheme in ",
              reference.substr(0, reference.find("://") + 3),
              "; use a data: URL, an http(s) URL or a file path");
  }
  return ReadLocalMedia(reference, policy.local, kind.max_bytes, field, kind.noun);
}

}  // namespace

std::vector<uint8_t> LoadImageBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field) {
  return LoadMediaBytes(reference, policy, {"image", policy.max_image_bytes}, field);
}

std::vector<uint8_t> LoadVideoBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field) {
  std::vector<uint8_t> bytes =
      LoadMediaBytes(reference, policy, {"video", policy.video.max_encoded_bytes}, field);
  if (bytes.empty()) FailField(ErrorCode::kInvalidArgument, field, "the video is empty");
  if (!LooksLikeVideoFile(bytes)) {
    FailField(
        ErrorCode::kInvalidArgument, field,
        "not a video file qvl can read (MP4, MOV, WebM, Matroska, AVI, MPEG-TS, FLV, Ogg, GIF)");
  }
  return bytes;
}

}  // namespace qvl
