// The image processor settings of a model folder (preprocessor_config.json): how big
// images may get and how pixels become patches. Absent keys take the defaults of
// transformers' Qwen2VLImageProcessor, which Qwen2-VL, Qwen2.5-VL and Qwen3-VL share.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace qvl {

struct ImageProcessorParams {
  // Area bounds for smart_resize: `size.shortest_edge` / `size.longest_edge` (despite
  // the names, pixel counts), or the top-level `min_pixels` / `max_pixels` of older
  // Qwen2-VL files, which take precedence as in transformers.
  int64_t min_pixels = 56 * 56;
  int64_t max_pixels = 28 * 28 * 1280;
  int patch_size = 14;
  int temporal_patch_size = 2;
  int merge_size = 2;
  std::array<float, 3> image_mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> image_std = {0.26862954f, 0.26130258f, 0.27577711f};
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;

  // Side granularity of resized images: one merged image token covers factor^2 pixels.
  int factor() const { return patch_size * merge_size; }
  // Values per patch row of pixel_values: channels * temporal_patch_size * patch_size^2.
  int patch_values() const { return 3 * temporal_patch_size * patch_size * patch_size; }
};

// Parses the JSON text of a preprocessor_config.json. `source` (the file path) starts
// every error message. Throws Error(kCorrupt) for malformed JSON or a field with a bad
// type or value (naming the field), and for settings qvl does not implement
// (do_resize false, a resample filter other than bicubic).
ImageProcessorParams ParsePreprocessorConfig(std::string_view json_text, const std::string& source);

// Reads and parses the file; Error(kNotFound / kIo) when it cannot be read.
ImageProcessorParams LoadPreprocessorConfig(const std::string& path);

}  // namespace qvl
