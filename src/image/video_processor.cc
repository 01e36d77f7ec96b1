#include "image/video_processor.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/error.h"
#include "base/mapped_file.h"
#include "image/bicubic_resize.h"
#include "image/patchify.h"
#include "image/smart_resize.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

// A field of the video config: absent or null keeps the default.
const Json* Field(const Json& root, const char* key) {
  const auto it = root.find(key);
  return it == root.end() || it->is_null() ? nullptr : &*it;
}

// The frames of a clip sampled at `sampling`'s rate (`at_rate`) when their frame pairs
// each get `least_pair_tokens` within the budget beside their text, else the most frames
// (at least min_frames, and a pair) that do, sampled as the rate's are over the whole
// clip. Those that still cannot fit are left to ClipBudget's refusal.
std::vector<int64_t> FitFramesToBudget(std::vector<int64_t> at_rate, int64_t total, double fps,
                                       const FrameSampling& sampling, const VideoBudget& budget,
                                       int64_t least_pair_tokens, int temporal,
                                       const std::string& name) {
  const int64_t max_tokens = MaxVideoTokens(budget);
  auto fits = [&](const std::vector<int64_t>& indices) {
    const std::vector<double> times = GroupTimestamps(indices, fps, temporal);
    const int64_t text = budget.text_tokens ? budget.text_tokens(times) : 0;
    return text + static_cast<int64_t>(times.size()) * least_pair_tokens <= max_tokens;
  };
  if (max_tokens == 0 || fits(at_rate)) return at_rate;
  auto sample = [&](int64_t n) {
    FrameSampling exactly = sampling;
    exactly.min_frames = exactly.max_frames = n;
    return SampleFrameIndices(total, fps, exactly, name);
  };
  const int64_t rate_frames = static_cast<int64_t>(at_rate.size());
  int64_t best = std::max<int64_t>(std::min(sampling.min_frames, rate_frames), temporal);
  // The cost grows with the frame count (a pair and its timestamp each), so the most that
  // fit is found by bisection.
  int64_t low = best + 1, high = rate_frames - 1;
  while (low <= high) {
    const int64_t mid = low + (high - low) / 2;
    if (fits(sample(mid))) {
      best = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return sample(best);
}

}  // namespace

VideoProcessorParams ParseVideoPreprocessorConfig(std::string_view json_text,
                                                  const std::string& source) {
  VideoProcessorParams p;
  p.image = ParsePreprocessorConfig(json_text, source);  // validates the JSON as well
  const Json root = Json::parse(json_text);
  if (const Json* v = Field(root, "fps")) {
    if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() > 1000) {
      Fail(ErrorCode::kCorrupt, source, ": field 'fps' must be a number in (0, 1000] (got ",
           v->dump(), ")");
    }
    p.sampling.fps = v->get<double>();
  }
  for (const auto& [key, out] : {std::pair{"min_frames", &p.sampling.min_frames},
                                 std::pair{"max_frames", &p.sampling.max_frames}}) {
    if (const Json* v = Field(root, key)) {
      if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > 100000) {
        Fail(ErrorCode::kCorrupt, source, ": field '", key,
             "' must be an integer in [1, 100000] (got ", v->dump(), ")");
      }
      *out = v->get<int64_t>();
    }
  }
  if (p.sampling.min_frames > p.sampling.max_frames) {
    Fail(ErrorCode::kCorrupt, source, ": min_frames (", p.sampling.min_frames,
         ") is above max_frames (", p.sampling.max_frames, ")");
  }
  return p;
}

VideoProcessorParams LoadVideoPreprocessorConfig(const std::string& path) {
  return ParseVideoPreprocessorConfig(ReadFileToString(path), path);
}

std::string VideoPreprocessorConfigPath(const std::string& model_dir) {
  return model_dir + "/video_preprocessor_config.json";
}

VideoProcessorParams VideoParamsOfFolder(const std::string& model_dir,
                                         const ImageProcessorParams& image) {
  const std::string path = VideoPreprocessorConfigPath(model_dir);
  if (std::filesystem::exists(path)) return LoadVideoPreprocessorConfig(path);
  VideoProcessorParams p;
  p.image = image;
  return p;
}

PreprocessedVideo PreprocessVideo(VideoFrameSource& source, const VideoProcessorParams& params,
                                  const FrameSampling& sampling, const VideoBudget& budget,
                                  const VideoLimits& limits, const std::string& name) {
  const ImageProcessorParams& ip = params.image;
  PreprocessedVideo result;
  result.input_frames = source.frame_count();
  result.fps = source.fps();
  CheckVideoLength(result.input_frames, result.fps, limits, name);
  result.sampled_indices = SampleFrameIndices(result.input_frames, result.fps, sampling, name);
  int64_t sampled = static_cast<int64_t>(result.sampled_indices.size());
  const int temporal = ip.temporal_patch_size;
  if (result.input_frames < temporal) {
    Fail(ErrorCode::kInvalidArgument, name, " has ", result.input_frames, " frame",
         result.input_frames == 1 ? "" : "s", "; a video needs at least ", temporal,
         " (send a still picture as an image)");
  }
  if (sampled < temporal) {
    Fail(ErrorCode::kInvalidArgument, name, ": ", sampled, " of its ", result.input_frames,
         " frames sampled; a video needs at least ", temporal,
         " (raise min_frames, num_frames or fps)");
  }
  // The clip's size comes from its first sampled frame, frame 0 at any frame count (or
  // the first that decodes); smart_resize covers all frames.
  RgbxImage decoded;
  const int64_t first = source.ReadFrame(result.sampled_indices[0], &decoded);
  result.original = {decoded.width(), decoded.height()};
  if (sampling.fit_to_budget) {
    // A frame smaller than the least a pair should get needs no fewer frames to keep it.
    const int64_t own_tokens = std::max<int64_t>(result.original.width / ip.factor(), 1) *
                               std::max<int64_t>(result.original.height / ip.factor(), 1);
    result.sampled_indices = FitFramesToBudget(
        std::move(result.sampled_indices), result.input_frames, result.fps, sampling, budget,
        std::min(kLeastTokensPerFramePair, own_tokens), temporal, name);
    if (static_cast<int64_t>(result.sampled_indices.size()) < sampled) {
      result.frames_at_rate = sampled;
      sampled = static_cast<int64_t>(result.sampled_indices.size());
    }
  }
  const std::vector<double> planned_times =
      GroupTimestamps(result.sampled_indices, result.fps, temporal);
  const int64_t planned_text = budget.text_tokens ? budget.text_tokens(planned_times) : 0;
  const ClipShape clip{sampled, temporal, PixelsPerVideoToken(ip), planned_text};
  const PixelRange range = ResolveImageBudget(ClipBudget(budget, clip, name), ip);

  result.resized = SmartResizeVideo(result.original, sampled, temporal, ip.factor(),
                                    range.min_pixels, range.max_pixels, name);
  const int patch = ip.patch_size;
  const int64_t height = result.resized.height / patch, width = result.resized.width / patch;
  const size_t group_values = static_cast<size_t>(height * width) * ip.patch_values();
  result.pixel_values.resize(group_values * planned_times.size());

  // transformers' video processor folds the 1/255 rescale into mean and std.
  ImageProcessorParams folded = ip;
  if (folded.do_rescale && folded.do_normalize) {
    const auto scale = static_cast<float>(1.0 / ip.rescale_factor);
    for (int c = 0; c < 3; ++c) {
      folded.image_mean[c] = ip.image_mean[c] * scale;
      folded.image_std[c] = ip.image_std[c] * scale;
    }
    folded.do_rescale = false;
  }
  const NormalizationTable table = MakeNormalizationTable(folded);
  const PatchLayout layout{patch, temporal, ip.merge_size};

  std::vector<RgbxImage> slots(temporal);
  std::vector<const RgbxImage*> frames(temporal);
  ResizeScratch scratch;
  const std::vector<int64_t> planned = std::move(result.sampled_indices);
  std::vector<int64_t>& taken = result.sampled_indices;
  taken.clear();
  int64_t groups = 0;
  int filled = 0;  // frames of the pair being filled
  auto patchify = [&] {
    for (int f = filled; f < temporal; ++f) frames[f] = frames[f - 1];  // padding: the last again
    PatchifyFrames(frames.data(), table, layout,
                   result.pixel_values.data() + groups * group_values);
    ++groups;
    filled = 0;
  };
  auto take = [&](int64_t index) {
    if (decoded.width() != result.original.width || decoded.height() != result.original.height) {
      Fail(ErrorCode::kInvalidArgument, name, ": frame ", index, " is ", decoded.width(), "x",
           decoded.height(), " pixels, frame ", taken.front(), " is ", result.original.width, "x",
           result.original.height, "; all frames of a video must have one size");
    }
    if (result.resized == result.original) {
      std::swap(decoded, slots[filled]);
    } else {
      BicubicResize(decoded, result.resized, &scratch, &slots[filled]);
    }
    frames[filled] = &slots[filled];
    taken.push_back(index);
    if (++filled == temporal) patchify();
  };
  take(first);
  // A file gives for a frame that does not decode the next one that does, or its last
  // where its stream ends early. Each frame is taken once, at its own time: a planned
  // frame that one taken already stands for, or past the end, is left out, not repeated
  // (the reference's decoders fail on such a frame, and it samples the frames that a
  // whole decode finds instead). The size and budget stay those of the frames planned.
  for (size_t k = 1; k < planned.size(); ++k) {
    if (planned[k] <= taken.back() || planned[k] >= source.frame_count()) continue;
    const int64_t index = source.ReadFrame(planned[k], &decoded);
    if (index > taken.back()) take(index);
  }
  if (filled > 0) patchify();
  sampled = static_cast<int64_t>(taken.size());
  if (sampled < temporal) {
    Fail(ErrorCode::kInvalidArgument, name, ": of its ", result.input_frames, " frames only frame ",
         first, " decodes; a video needs at least ", temporal,
         " (send a still picture as an image)");
  }
  result.frames_left_out = static_cast<int64_t>(planned.size()) - sampled;
  if (source.frame_count() < result.input_frames) {
    result.promised_frames = result.input_frames;
    result.input_frames = source.frame_count();
  }
  result.pixel_values.resize(group_values * groups);
  result.grid_thw = {groups, height, width};
  result.timestamps = GroupTimestamps(taken, result.fps, temporal);
  if (budget.text_tokens) result.text_tokens = budget.text_tokens(result.timestamps);
  return result;
}

}  // namespace qvl
