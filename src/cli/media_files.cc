#include "cli/media_files.h"

#include <cstdint>
#include <span>

#include "base/error.h"
#include "base/mapped_file.h"
#include "image/image_decoder.h"
#include "image/image_format.h"
#include "image/video_decoder.h"

namespace qvl::cli {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string ReadInputFile(const std::string& flag, const std::string& path, uint64_t max_bytes) {
  try {
    return ReadFileToString(path, max_bytes);
  } catch (const Error& e) {
    Fail(e.code(), flag, " ", e.what());
  }
}

std::string ReadImageFile(const std::string& flag, const std::string& path,
                          const EngineOptions& options) {
  std::string bytes = ReadInputFile(flag, path, options.max_image_bytes);
  if (!DetectImageFormat(Bytes(bytes)) && LooksLikeVideoFile(Bytes(bytes))) {
    Fail(ErrorCode::kInvalidArgument, flag, " ", path, ": this is a video; give it with ",
         flag == "-i" ? "-v" : "/video");
  }
  RequireImageFormat(Bytes(bytes), flag + " " + path);
  return bytes;
}

std::string ReadVideoFile(const std::string& flag, const std::string& path,
                          const EngineOptions& options) {
  std::string bytes =
      ReadInputFile(flag, path, static_cast<uint64_t>(options.video_limits.max_encoded_bytes));
  if (DetectImageFormat(Bytes(bytes)) && !LooksLikeVideoFile(Bytes(bytes))) {
    Fail(ErrorCode::kInvalidArgument, flag, " ", path, ": this is an image; give it with ",
         flag == "-v" ? "-i" : "/image");
  }
  return bytes;
}

}  // namespace qvl::cli
