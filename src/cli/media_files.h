// The image and video files `qvl run` reads, for -i / -v and for the paths of an
// interactive chat: refused by their size before they are read, and an image given as a
// video (or the reverse) named as such.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.h"

namespace qvl::cli {

// The bytes of `path`, refused by its size before it is read; `flag` starts the message
// of an error.
std::string ReadInputFile(const std::string& flag, const std::string& path, uint64_t max_bytes);

// The bytes of an image file. `flag` ("-i", "/image") starts the message of an error.
std::string ReadImageFile(const std::string& flag, const std::string& path,
                          const EngineOptions& options);
std::string ReadVideoFile(const std::string& flag, const std::string& path,
                          const EngineOptions& options);

}  // namespace qvl::cli
