#include "engine/video_preparer.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/timer.h"
#include "engine/content_hash.h"
#include "image/video_decoder.h"
#include "image/video_frame_list.h"

namespace qvl {
namespace {

// A frame source that times and counts the reads of the one it owns, so that decoding
// can be told apart from the resizing that PreprocessVideo interleaves with it.
class TimedFrameSource : public VideoFrameSource {
 public:
  explicit TimedFrameSource(std::unique_ptr<VideoFrameSource> source)
      : source_(std::move(source)) {}
  int64_t frame_count() const override { return source_->frame_count(); }
  double fps() const override { return source_->fps(); }
  int64_t ReadFrame(int64_t index, RgbxImage* out) override {
    Stopwatch clock;
    const int64_t read = source_->ReadFrame(index, out);
    read_ms_ += clock.Millis();
    ++reads_;
    return read;
  }
  double read_ms() const { return read_ms_; }
  int64_t reads() const { return reads_; }

 private:
  std::unique_ptr<VideoFrameSource> source_;
  double read_ms_ = 0;
  int64_t reads_ = 0;
};

// "10.0 s": tenths, as the timestamps the model reads.
std::string SecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

// A line about the clip that names its request as the access log does, so the two join.
void LogAboutClip(LogLevel level, std::string_view request_id, const std::string& message) {
  if (!LogEnabled(level)) return;
  std::vector<LogField> fields;
  if (!request_id.empty()) fields.emplace_back("request_id", request_id);
  LogEvent(level, message, fields);
}

}  // namespace

uint64_t VideoBytesHash(const VideoInput& input) {
  ContentHasher hasher;
  if (input.frames.empty()) {
    hasher.Update(input.file);
  } else {
    for (const std::vector<uint8_t>& frame : input.frames) {
      hasher.UpdateValue(frame.size());
      hasher.Update(frame);
    }
  }
  return hasher.Finish();
}

PreparedVideoInput PrepareVideo(const VideoInput& input, uint64_t bytes_hash,
                                const VideoProcessorParams& params, const VideoBudget& budget,
                                const VideoLimits& limits, std::string_view request_id) {
  Stopwatch clock;
  std::unique_ptr<VideoFrameSource> source;
  VideoFileDecoder* file = nullptr;
  if (input.frames.empty()) {
    auto decoder = std::make_unique<VideoFileDecoder>(input.file, limits, input.name);
    file = decoder.get();
    source = std::move(decoder);
  } else {
    std::vector<std::span<const uint8_t>> frames(input.frames.begin(), input.frames.end());
    source = std::make_unique<VideoFrameList>(std::move(frames), input.fps, limits, input.name);
  }
  const double open_ms = clock.Millis();
  auto timed_source = std::make_unique<TimedFrameSource>(std::move(source));
  const TimedFrameSource& timed = *timed_source;
  source = std::move(timed_source);
  FrameSampling sampling = params.sampling;
  if (input.sample_fps > 0) sampling.fps = input.sample_fps;
  if (input.min_frames > 0) sampling.min_frames = input.min_frames;
  if (input.max_frames > 0) sampling.max_frames = input.max_frames;
  if (input.num_frames > 0) sampling.min_frames = sampling.max_frames = input.num_frames;
  sampling.fit_to_budget = input.sample_fps <= 0 && input.min_frames <= 0 &&
                           input.max_frames <= 0 && input.num_frames <= 0;
  PreprocessedVideo video = PreprocessVideo(*source, params, sampling, budget, limits, input.name);

  PreparedVideoInput out;
  out.read_ms = open_ms + timed.read_ms();
  PreparedImage& v = out.visual;
  v.info.decoded_frames = file != nullptr ? file->decoded_frames() : timed.reads();
  const int merge = params.image.merge_size;
  v.SetGeometry(video.grid_thw, video.original, video.resized, merge);
  v.info.frames = video.input_frames;
  v.info.sampled_frames = static_cast<int64_t>(video.sampled_indices.size());
  v.info.fps = video.fps;
  v.info.text_tokens = video.text_tokens;
  v.info.frames_at_rate = video.frames_at_rate;
  if (video.frames_at_rate > 0) {
    const double seconds = video.input_frames / video.fps;
    LogAboutClip(LogLevel::kInfo, request_id,
                 StrCat(input.name, ": its ", video.frames_at_rate, " frames at ", sampling.fps,
                        " fps do not fit its video budget of ", MaxVideoTokens(budget),
                        " tokens at a legible size; sampled ", v.info.sampled_frames, " over its ",
                        SecondsText(seconds), " instead (one every ",
                        SecondsText(seconds / static_cast<double>(v.info.sampled_frames)), ")"));
  }
  if (video.frames_left_out > 0) {
    LogAboutClip(
        LogLevel::kWarn, request_id,
        StrCat(input.name, ": ", video.frames_left_out, " of the ",
               video.frames_left_out + v.info.sampled_frames, " frames sampled ",
               video.frames_left_out == 1 ? "does not decode and is" : "do not decode and are",
               " left out; the answer is about the ", v.info.sampled_frames, " that do, from ",
               SecondsText(video.sampled_indices.front() / video.fps), " to ",
               SecondsText(video.sampled_indices.back() / video.fps)));
  }
  // A stream that ends before its packets do is cut short as well, at its last frame
  // that decodes.
  const double declared_seconds =
      std::max(file != nullptr ? file->declared_seconds() : 0, video.promised_frames / video.fps);
  if (declared_seconds > 0) {
    // Answered from what is there, but the user is to know it is not the whole clip.
    v.info.declared_seconds = declared_seconds;
    LogAboutClip(
        LogLevel::kWarn, request_id,
        StrCat(input.name, " is cut short: its container declares ",
               SecondsText(v.info.declared_seconds), " but holds ", video.input_frames,
               " frames at ", video.fps, " fps (", SecondsText(video.input_frames / video.fps),
               "); the answer is about those"));
  }
  // The encoding depends on the frames, on which of them were sampled and on the size
  // the budget resized them to.
  ContentHasher hasher;
  hasher.UpdateValue(bytes_hash);
  for (const int64_t index : video.sampled_indices) hasher.UpdateValue(index);
  hasher.UpdateValue(video.resized.width);
  hasher.UpdateValue(video.resized.height);
  v.content_hash = hasher.Finish();
  v.pixels = std::move(video.pixel_values);
  out.layout.timestamps = video.timestamps;
  out.layout.tokens_per_group = static_cast<int>(video.tokens_per_group(merge));
  v.info.decode_ms = clock.Millis();
  return out;
}

}  // namespace qvl
