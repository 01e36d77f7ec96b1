// Reading images from the server's own disk on behalf of a request. A server only
// allows files under one folder the operator names (--allowed-local-media); `qvl run`
// allows any file the user can read, with relative paths taken from the request file's
// folder.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

struct LocalMediaPolicy {
  bool enabled = false;
  // Files must resolve (symlinks followed) to a path inside this folder; empty = any file.
  std::string root;
  // Relative paths are taken from here; empty = from `root` (or the working directory).
  std::string base_dir;
};

// Reads the file `path` (a plain path or a file:// URL) under `policy`. Throws FieldError
// naming `field`: kInvalidArgument when local files are off, for `..` components, paths
// that lead outside the root (symlinks included) and files that are not regular;
// kNotFound when the file does not exist; kTooLarge over max_bytes (before reading).
// `noun` ("image", "video") is what the messages call the file.
std::vector<uint8_t> ReadLocalMedia(std::string_view path, const LocalMediaPolicy& policy,
                                    int64_t max_bytes, std::string_view field,
                                    std::string_view noun = "image");

}  // namespace qvl
