// Where the bytes of an image part come from: a data: URL (always), a file on this
// machine (when a LocalMediaPolicy allows it) or an http(s) URL (when fetching is on).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "image/video_limits.h"
#include "server/image_fetcher.h"
#include "server/local_media.h"

namespace qvl {

struct MediaPolicy {
  int64_t max_image_bytes = int64_t{32} << 20;  // encoded bytes per image
  VideoLimits video;  // bytes per file (max_encoded_bytes), frames, videos per request
  LocalMediaPolicy local;
  bool allow_urls = false;
  ImageFetchOptions fetch;  // fetch.max_bytes is replaced by max_image_bytes
};

// The encoded bytes `reference` names. Throws FieldError naming `field`: kTooLarge over
// max_image_bytes (checked before decoding or downloading the whole file),
// kInvalidArgument for malformed data URLs, disabled sources and unreadable files, and
// for bytes that are not an image format qvl decodes (naming the format when it is a
// known one, e.g. TIFF or HEIF).
std::vector<uint8_t> LoadImageBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field);

// The same for a video file (data:video/...;base64 URLs, files, http(s) URLs under the
// same rules), up to video.max_encoded_bytes; refuses bytes that are no video container qvl
// reads (MP4/MOV, WebM/Matroska, AVI, MPEG-TS, FLV, Ogg).
std::vector<uint8_t> LoadVideoBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field);

}  // namespace qvl
