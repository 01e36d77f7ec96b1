// Downloads an image or a video from an http(s) URL for a request, when the operator
// allows it (--allow-image-urls). Bounded in bytes, stalls, time and redirects; proxies from the
// environment are ignored so that the address checks see the real peer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

// The slowest steady transfer a fetch is given time for: the whole transfer may take
// timeout_ms plus max_bytes at this rate (a 256 MB video: 10 s + 256 s).
inline constexpr int64_t kMinFetchBytesPerSecond = 1 << 20;

struct ImageFetchOptions {
  int64_t max_bytes = int64_t{32} << 20;
  // The connection, and any stretch in which the server sends nothing, may take this
  // long; the whole transfer timeout_ms plus max_bytes at kMinFetchBytesPerSecond. A
  // total of timeout_ms alone failed videos that were arriving steadily.
  int timeout_ms = 10000;
  int max_redirects = 3;
  // Allow loopback, private, link-local and other non-public addresses (the operator's
  // own network); off by default because clients could reach internal services.
  bool allow_private_addresses = false;
  std::string_view noun = "image";  // what is fetched, for the messages ("video")
};

// GETs `url` (http or https only). Throws FieldError naming `field`: kInvalidArgument for
// a bad URL, a refused address, a non-2xx status or a network failure; kTooLarge when the
// body is over max_bytes (checked against Content-Length first, then while receiving).
std::vector<uint8_t> FetchImage(const std::string& url, const ImageFetchOptions& options,
                                std::string_view field);

}  // namespace qvl
