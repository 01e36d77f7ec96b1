#include "cli/bench_request.h"

#include <span>

#include "base/timer.h"
#include "engine/video_preparer.h"
#include "image/image_processor.h"
#include "model/mrope.h"
#include "model/single_sequence.h"
#include "model/visual_features.h"
#include "text/chat_template.h"

namespace qvl::cli {

RunTimes RunBenchRequest(LoadedModel& l, const BenchRequest& request, ThreadPool& pool,
                         RequestShape* shape) {
  RunTimes t;
  Stopwatch total;
  const ModelConfig& cfg = l.model->config();
  const int merge = cfg.vision.spatial_merge_size;

  // Images and video -> pixel values; prompt -> token ids and M-RoPE positions.
  std::vector<PreprocessedImage> images;
  std::vector<GridThw> grids;
  std::vector<int> image_token_counts;
  ChatMessage user;
  user.role = "user";
  *shape = RequestShape();
  for (size_t i = 0; i < request.images.size(); ++i) {
    const MappedFile& file = request.images[i];
    images.push_back(PreprocessImage(std::span<const uint8_t>(file.data(), file.size()),
                                     l.settings.image_params, request.image_budget, ImageLimits{},
                                     request.image_paths[i]));
    const PreprocessedImage& pre = images.back();
    grids.push_back({pre.grid_thw[0], pre.grid_thw[1], pre.grid_thw[2]});
    image_token_counts.push_back(static_cast<int>(grids.back().tokens(merge)));
    shape->image_tokens += image_token_counts.back();
    user.parts.push_back({ChatPart::Kind::kImage, ""});
  }
  if (!images.empty()) {
    shape->first_image.width = images[0].original.width;
    shape->first_image.height = images[0].original.height;
    shape->first_image.resized_width = images[0].resized.width;
    shape->first_image.resized_height = images[0].resized.height;
  }
  std::optional<PreparedVideoInput> video;
  std::vector<GridThw> video_grids;
  std::vector<VideoPromptLayout> layouts;
  if (request.video) {
    video = PrepareVideo(*request.video, VideoBytesHash(*request.video), l.settings.video_params,
                         request.video_budget, VideoLimits{});
    t.video_read = video->read_ms;
    t.video_resize = video->visual.info.decode_ms - video->read_ms;
    video_grids.push_back(video->visual.grid);
    layouts.push_back(video->layout);
    shape->video = video->visual.info;
    shape->video_tokens = video->visual.info.tokens;
    user.parts.push_back({ChatPart::Kind::kVideo, ""});
  }
  user.parts.push_back({ChatPart::Kind::kText, request.prompt});
  const std::vector<int32_t> ids = TokenizePrompt(
      l.settings.tokenizer,
      RenderChatTemplate({user}, /*add_generation_prompt=*/true, {}, l.settings.chat_template),
      image_token_counts, layouts);
  const MropePositions pos =
      ComputeMropePositions(ids, cfg.image_token_id, grids, merge, cfg.video_token_id, video_grids);
  t.preprocess = total.Millis();

  // Vision tower: each image, then the video, one at a time as the engine runs them.
  Stopwatch stage;
  std::vector<VisionOutput> vision;
  vision.reserve(images.size() + 1);  // features point into these
  for (size_t i = 0; i < images.size(); ++i) {
    vision.push_back(l.model->vision().Encode(images[i].pixel_values.data(),
                                              std::span<const GridThw>(&grids[i], 1), pool));
  }
  if (video) {
    Stopwatch encode;
    vision.push_back(l.model->vision().Encode(video->visual.pixels.data(), video_grids, pool));
    t.video_encode = encode.Millis();
  }
  VisualFeatures features;
  for (const VisionOutput& v : vision) {
    AppendVisualFeatures(&v, v.tokens, cfg.text.hidden_size, v.deepstack.size(), &features);
  }
  t.vision = stage.Millis();

  // Prefill the whole prompt in one chunk, then decode greedily.
  const int64_t n = static_cast<int64_t>(ids.size());
  SingleSequence sequence(l.model->text(), l.model->options().kv_dtype, n + request.tokens, pool);
  std::vector<float> logits(cfg.text.vocab_size);
  stage.Reset();
  sequence.Prefill(ids, pos, vision.empty() ? nullptr : &features, logits.data());
  int32_t token = Argmax(logits);
  t.prefill = stage.Millis();
  t.ttft = total.Millis();

  stage.Reset();
  for (int step = 1; step < request.tokens; ++step) {
    sequence.Step(token, logits.data());
    token = Argmax(logits);
  }
  t.decode = stage.Millis();
  t.total = total.Millis();
  shape->prompt_tokens = n;
  return t;
}

}  // namespace qvl::cli
