// The request `qvl bench` measures: images, a video (a file or its frames) and a prompt,
// run on the model directly (no server, no scheduler), each stage timed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "engine/loaded_model.h"
#include "engine/request.h"
#include "image/image_budget.h"
#include "image/video_budget.h"

namespace qvl::cli {

struct BenchRequest {
  std::vector<std::string> image_paths;
  std::vector<MappedFile> images;
  ImageBudget image_budget;  // per image
  // The video, after the images in the user message; its name is its path (or the
  // first frame's).
  std::optional<VideoInput> video;
  VideoBudget video_budget;
  std::string prompt;
  int tokens = 0;  // generated greedily, EOS ignored
};

// One run, in milliseconds. preprocess covers the images, the video (video_read +
// video_resize) and the prompt; vision covers every image and the video (video_encode).
struct RunTimes {
  double preprocess = 0, video_read = 0, video_resize = 0, vision = 0, video_encode = 0,
         prefill = 0, decode = 0, ttft = 0, total = 0;
};

struct RequestShape {
  int64_t prompt_tokens = 0, image_tokens = 0, video_tokens = 0;
  ImageGrid first_image;  // as sent and resized
  ImageGrid video;        // frames, decoded and sampled frames, sizes, grid
};

// The request, stage by stage: images and video decoded and cut into patches, the
// prompt tokenized, each image and the video through the vision tower, the prompt
// prefilled in one chunk, then request.tokens - 1 decode steps.
RunTimes RunBenchRequest(LoadedModel& l, const BenchRequest& request, ThreadPool& pool,
                         RequestShape* shape);

}  // namespace qvl::cli
