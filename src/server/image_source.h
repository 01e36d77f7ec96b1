// Where the bytes of an image part come from: a data: URL (always), a file on this
// machine (when a LocalMediaPolicy allows it) or an http(s) URL (when fetching is on).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "image/video_limits.h"
#include "server/image_fetcher.h"
#include "server/local_media.h"

namespace qvl {

class InlineMedia;  // inline_media.h

struct MediaPolicy {
  // Encoded bytes per image; the engine's limit (TakeEngineLimits) where there is one.
  int64_t max_image_bytes = static_cast<int64_t>(EngineOptions{}.max_image_bytes);
  VideoLimits video;  // bytes per file (max_encoded_bytes), frames, videos per request
  LocalMediaPolicy local;
  bool allow_urls = false;
  ImageFetchOptions fetch;  // max_bytes and noun are replaced by the image or video ones
  // Payloads already decoded from the request body (TakeInlineMedia): a data URL without
  // one takes its bytes from here, by field.
  InlineMedia* inline_media = nullptr;
};

// The encoded bytes `reference` names. Throws FieldError naming `field`: kTooLarge over
// max_image_bytes (checked before decoding or downloading the whole file),
// kInvalidArgument for malformed data URLs, disabled sources and unreadable files. The
// bytes' format is the engine's to check, with the rest of decoding.
std::vector<uint8_t> LoadImageBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field);

// The same for a video file (data:video/...;base64 URLs, files, http(s) URLs under the
// same rules), up to video.max_encoded_bytes; refuses bytes that are no video container qvl
// reads (MP4/MOV, WebM/Matroska, AVI, MPEG-TS, FLV, Ogg, GIF).
std::vector<uint8_t> LoadVideoBytes(std::string_view reference, const MediaPolicy& policy,
                                    std::string_view field);

}  // namespace qvl
