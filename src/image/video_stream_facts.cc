#include "image/video_stream_facts.h"

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace qvl {
namespace {

// A colour field as its integer. Decoders copy these from the stream's bytes unchecked,
// so a broken file leaves values no enumerator names, and reading such a value through
// the enum type is undefined behaviour.
template <typename Enum>
std::underlying_type_t<Enum> RawValue(const Enum& field) {
  std::underlying_type_t<Enum> value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

// The length the container declares for the video, in seconds; 0 when it declares none.
// The stream's own when it has one (MP4); else the whole file's (Matroska), which an
// audio track may outlast the video by a little.
double DeclaredSeconds(const AVFormatContext* fmt, const AVStream* s) {
  if (s->duration != AV_NOPTS_VALUE && s->duration > 0) return s->duration * av_q2d(s->time_base);
  if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0) {
    return static_cast<double>(fmt->duration) / AV_TIME_BASE;
  }
  return 0;
}

// How much longer than its frames a container may say it is without being cut short:
// rounding of durations, an audio track that ends after the video.
constexpr double kCutShortSlackSeconds = 0.5;
constexpr int kCutShortSlackFrames = 3;

}  // namespace

double CutShortSeconds(const AVFormatContext* fmt, const AVStream* s, int64_t frames, double fps) {
  const double declared = DeclaredSeconds(fmt, s);
  const double held = static_cast<double>(frames) / fps;
  return declared > held + std::max(kCutShortSlackSeconds, kCutShortSlackFrames / fps) ? declared
                                                                                       : 0;
}

int UprightOrientation(const AVStream* s) {
  size_t bytes = 0;
  const auto* m = reinterpret_cast<const int32_t*>(
      av_stream_get_side_data(s, AV_PKT_DATA_DISPLAYMATRIX, &bytes));
  // A matrix is 3 x 3 numbers; a container's shorter one is read as none.
  if (m == nullptr || bytes < 9 * sizeof(int32_t)) return 1;
  const bool mirrors = static_cast<double>(m[0]) * m[4] - static_cast<double>(m[1]) * m[3] < 0;
  // Counter-clockwise degrees the frames are to be turned by (NaN for a degenerate one).
  const double degrees = av_display_rotation_get(m);
  const double quarters = std::round(degrees / 90);
  if (mirrors || !std::isfinite(degrees) || std::abs(degrees - 90 * quarters) > 0.5) return 1;
  switch ((static_cast<int>(quarters) % 4 + 4) % 4) {
    case 1:
      return 8;  // 90 counter-clockwise
    case 2:
      return 3;  // 180
    case 3:
      return 6;  // 90 clockwise
    default:
      return 1;
  }
}

double FrameRate(const AVStream* s) {
  for (const AVRational r : {s->avg_frame_rate, s->r_frame_rate}) {
    if (r.num > 0 && r.den > 0) return av_q2d(r);
  }
  return 0;
}

int SwsColorspace(const AVFrame* f) {
  switch (RawValue(f->colorspace)) {
    case AVCOL_SPC_BT709:
      return SWS_CS_ITU709;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
      return SWS_CS_ITU601;
    case AVCOL_SPC_SMPTE240M:
      return SWS_CS_SMPTE240M;
    case AVCOL_SPC_FCC:
      return SWS_CS_FCC;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
      return SWS_CS_BT2020;
    default:
      // Untagged: what players assume, HD as BT.709 and SD as BT.601.
      return f->height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;
  }
}

bool FullRange(const AVFrame* f) {
  switch (f->format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P:
      return true;
    default:
      return RawValue(f->color_range) == AVCOL_RANGE_JPEG;
  }
}

}  // namespace qvl
