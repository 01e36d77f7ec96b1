#include "image/video_decoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/video_stream_facts.h"

namespace qvl {
namespace {

// Containers that hold one video as a file, animated GIF among them (what the reference's
// FFmpeg-based readers take as a video too). Anything else (playlists, concat lists,
// image sequences, raw streams) is refused: such demuxers can open other files or URLs.
constexpr const char* kDemuxers = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,flv,ogg,gif";
constexpr int kIoBufferSize = 64 << 10;

std::string AvError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof(text));
  return text;
}

// The largest single allocation FFmpeg may make: one frame of packed 8-bit RGBA at the
// largest frame size VideoLimits accepts by default, and its padding (planar formats
// need less a plane; packed 16-bit RGBA frames over 2896 x 2896 pixels fail to decode).
// Legitimate files need no more (the sample index of 36,000 frames is under 1 MiB), but
// a few kilobytes of MP4 can declare a sample table of 80 million entries, which
// libavformat would build in gigabytes while opening the file, before any limit of ours
// can be checked; capped, such a table fails to load and the file has no frames.
constexpr size_t kLargestFfmpegAllocation =
    static_cast<size_t>(4 * VideoLimits{}.max_frame_pixels) + (size_t{1} << 20);

// Once per process: FFmpeg logs to stderr by default (its errors reach users as Error
// messages instead) and allocates whatever a file asks for.
void SetUpFfmpeg() {
  static const bool done = [] {
    av_log_set_level(AV_LOG_QUIET);
    av_max_alloc(kLargestFfmpegAllocation);
    return true;
  }();
  (void)done;
}

struct MemoryInput {
  const uint8_t* data = nullptr;
  int64_t size = 0;
  int64_t pos = 0;
};

int ReadInput(void* opaque, uint8_t* buffer, int size) {
  auto* in = static_cast<MemoryInput*>(opaque);
  const int64_t n = std::min<int64_t>(size, in->size - in->pos);
  if (n <= 0) return AVERROR_EOF;
  std::memcpy(buffer, in->data + in->pos, static_cast<size_t>(n));
  in->pos += n;
  return static_cast<int>(n);
}

int64_t SeekInput(void* opaque, int64_t offset, int whence) {
  auto* in = static_cast<MemoryInput*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return in->size;
  int64_t target = -1;
  if (whence == SEEK_SET) target = offset;
  if (whence == SEEK_CUR) target = in->pos + offset;
  if (whence == SEEK_END) target = in->size + offset;
  if (target < 0 || target > in->size) return AVERROR(EINVAL);
  in->pos = target;
  return target;
}

// No demuxer may open a second file (MOV data references, playlists).
int RefuseNestedOpen(AVFormatContext*, AVIOContext**, const char*, int, AVDictionary**) {
  return AVERROR(EPERM);
}

struct AvioFree {
  void operator()(AVIOContext* avio) const {
    av_freep(&avio->buffer);  // the demuxer may have replaced the one we gave
    avio_context_free(&avio);
  }
};
struct FormatClose {
  void operator()(AVFormatContext* fmt) const { avformat_close_input(&fmt); }
};

// An opened container over memory, with its stream parameters. Owns everything it
// allocates even when its constructor throws.
class Demuxer {
 public:
  Demuxer(std::span<const uint8_t> bytes, int64_t max_frame_pixels, const std::string& name) {
    input_ = {bytes.data(), static_cast<int64_t>(bytes.size()), 0};
    auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferSize));
    if (buffer == nullptr) Fail(ErrorCode::kInternal, name, ": out of memory");
    avio_.reset(
        avio_alloc_context(buffer, kIoBufferSize, 0, &input_, ReadInput, nullptr, SeekInput));
    if (avio_ == nullptr) {
      av_free(buffer);
      Fail(ErrorCode::kInternal, name, ": out of memory");
    }
    AVFormatContext* fmt = avformat_alloc_context();
    if (fmt == nullptr) Fail(ErrorCode::kInternal, name, ": out of memory");
    fmt->pb = avio_.get();
    fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    fmt->format_whitelist = av_strdup(kDemuxers);
    fmt->io_open = RefuseNestedOpen;
    const int opened = avformat_open_input(&fmt, nullptr, nullptr, nullptr);
    if (opened < 0) {  // fmt is freed
      // MP4 and MOV writers put the index last by default, so a file cut short has none.
      const bool iso = bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "ftyp", 4) == 0;
      Fail(ErrorCode::kInvalidArgument, name,
           " is not a video file qvl can read (MP4, MOV, WebM, Matroska, AVI, MPEG-TS, FLV, "
           "Ogg, GIF): ",
           AvError(opened),
           iso ? " (an MP4 or MOV file without its index, as one cut short before the end, "
                 "cannot be read)"
               : "");
    }
    fmt_.reset(fmt);
    // Frame sizes the container declares are checked before find_stream_info, which may
    // decode a frame; the decoders it opens get the same pixel cap.
    for (unsigned i = 0; i < fmt_->nb_streams; ++i) {
      const AVCodecParameters* par = fmt_->streams[i]->codecpar;
      if (par->codec_type == AVMEDIA_TYPE_VIDEO && par->width > 0 && par->height > 0 &&
          par->width > max_frame_pixels / par->height) {
        Fail(ErrorCode::kTooLarge, name, " has frames of ", par->width, "x", par->height,
             " pixels; at most ", max_frame_pixels, " pixels per frame are accepted");
      }
    }
    std::vector<AVDictionary*> options(fmt_->nb_streams, nullptr);
    for (AVDictionary*& d : options) {
      av_dict_set_int(&d, "max_pixels", max_frame_pixels, 0);
      av_dict_set_int(&d, "threads", 1, 0);
    }
    const int found =
        avformat_find_stream_info(fmt_.get(), options.empty() ? nullptr : options.data());
    for (AVDictionary*& d : options) av_dict_free(&d);
    if (found < 0) {
      Fail(ErrorCode::kInvalidArgument, name, " cannot be read: ", AvError(found));
    }
    stream_ = av_find_best_stream(fmt_.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec_, 0);
    if (stream_ < 0 || codec_ == nullptr) {
      Fail(ErrorCode::kInvalidArgument, name, " has no video stream qvl can decode");
    }
  }

  AVFormatContext* fmt() { return fmt_.get(); }
  AVStream* stream() { return fmt_->streams[stream_]; }
  int stream_index() const { return stream_; }
  const AVCodec* codec() const { return codec_; }

 private:
  MemoryInput input_;
  std::unique_ptr<AVIOContext, AvioFree> avio_;
  std::unique_ptr<AVFormatContext, FormatClose> fmt_;  // closed before avio_ is freed
  int stream_ = -1;
  const AVCodec* codec_ = nullptr;
};

}  // namespace

// What the counting pass learns of the stream's packets: enough to map a frame index to
// its timestamp and to the keyframe decoding it must start from.
struct PacketIndex {
  // Presentation timestamps of the frames, sorted: frame k is shown k-th. Empty when the
  // packets lack distinct timestamps; then frame k is the k-th frame decoded.
  std::vector<int64_t> frame_pts;
  // Keyframes in decode order: their ordinal among the stream's packets and their pts.
  std::vector<int64_t> key_ordinals;
  std::vector<int64_t> key_pts;
};

struct VideoFileDecoder::State {
  std::string name;
  VideoLimits limits;
  VideoDecodeOptions options;
  PacketIndex index;
  int64_t packets_read = 0;  // the stream's packets taken from the demuxer
  int64_t last_read = -1;    // the index of the frame last asked for
  std::span<const uint8_t> bytes;
  std::unique_ptr<Demuxer> demuxer;
  AVCodecContext* codec = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* frame = nullptr;
  AVFrame* last = nullptr;  // the latest decoded frame: the one ReadFrame gives
  bool have_last = false;
  SwsContext* sws = nullptr;
  int64_t frames = 0;
  double fps = 0;
  double declared_seconds = 0;  // of a file cut short
  int width = 0, height = 0;    // as shown: turned upright
  int orientation = 1;          // UprightOrientation
  RgbxImage stored;             // a frame before it is turned upright
  int64_t next = 0;             // index of the frame the decoder gives next
  int64_t seen = 0;             // one past the latest frame in presentation order decoded
  int64_t decoded = 0;          // frames the codec gave, sampled or not
  bool flushed = false;

  ~State() {
    sws_freeContext(sws);
    av_frame_free(&last);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
  }

  // The next frame into `frame`; false at the end of the stream.
  bool DecodeNext() {
    for (;;) {
      const int received = avcodec_receive_frame(codec, frame);
      if (received == 0) {
        ++decoded;
        return true;
      }
      if (received == AVERROR_EOF) return false;
      if (received != AVERROR(EAGAIN)) {
        Fail(ErrorCode::kInvalidArgument, name, ": frame ", next,
             " cannot be decoded: ", AvError(received));
      }
      if (flushed) return false;
      const int read = av_read_frame(demuxer->fmt(), packet);
      if (read < 0) {  // the end, or a truncated file: drain what the decoder holds
        avcodec_send_packet(codec, nullptr);
        flushed = true;
        continue;
      }
      if (packet->stream_index != demuxer->stream_index()) {
        av_packet_unref(packet);
        continue;
      }
      ++packets_read;
      const int sent = avcodec_send_packet(codec, packet);
      av_packet_unref(packet);
      if (sent < 0 && sent != AVERROR(EAGAIN)) {
        Fail(ErrorCode::kInvalidArgument, name, ": frame ", next,
             " cannot be decoded: ", AvError(sent));
      }
    }
  }

  bool seeks() const { return options.seek && !index.frame_pts.empty(); }

  // The rank of a decoded frame in presentation order; without timestamps the next one.
  // A frame shown after every packet's time is the last.
  int64_t RankOf(const AVFrame* f) const {
    const int64_t pts = f->pts != AV_NOPTS_VALUE ? f->pts : f->best_effort_timestamp;
    if (!seeks() || pts == AV_NOPTS_VALUE) return next;
    const auto& all = index.frame_pts;
    const int64_t rank = std::lower_bound(all.begin(), all.end(), pts) - all.begin();
    return std::min(rank, frames - 1);
  }

  // When frame `target` lies past a keyframe not yet sent to the decoder, skips the
  // packets before that keyframe (demuxed, never decoded) and flushes the decoder, so
  // that only the keyframe's group is decoded. The keyframe is the last one in decode
  // order shown at or before the target: every frame from it on in presentation order
  // decodes from it alone (a closed group, or an open one whose leading frames, shown
  // before it, are dropped), so the frame is bit for bit the one sequential decoding
  // gives. A frame that sampling skips this way is never decoded, so a broken one in a
  // skipped group goes unnoticed.
  void SkipToKeyframeOf(int64_t target) {
    const int64_t target_pts = index.frame_pts[target];
    int64_t key = -1;
    for (size_t i = 0; i < index.key_ordinals.size(); ++i) {
      if (index.key_pts[i] <= target_pts) key = index.key_ordinals[i];
    }
    if (key <= packets_read || next > target) return;  // decoding on is no slower
    avcodec_flush_buffers(codec);
    while (packets_read < key && av_read_frame(demuxer->fmt(), packet) >= 0) {
      if (packet->stream_index == demuxer->stream_index()) ++packets_read;
      av_packet_unref(packet);
    }
  }

  // `f` as RGB, turned upright.
  void Convert(const AVFrame* f, RgbxImage* out) {
    if (!OrientationTransforms(orientation)) return ConvertStored(f, out);
    ConvertStored(f, &stored);
    ApplyOrientation(stored, orientation, out);
  }

  void ConvertStored(const AVFrame* f, RgbxImage* out) {
    CheckFrameSize(f->width, f->height, limits, name);
    out->Reset(f->width, f->height);
    if (f->format == AV_PIX_FMT_GBRP) {
      // Planar G, B, R: an exact copy (lossless RGB video stays bit-identical).
      for (int y = 0; y < f->height; ++y) {
        const uint8_t* g = f->data[0] + static_cast<ptrdiff_t>(y) * f->linesize[0];
        const uint8_t* b = f->data[1] + static_cast<ptrdiff_t>(y) * f->linesize[1];
        const uint8_t* r = f->data[2] + static_cast<ptrdiff_t>(y) * f->linesize[2];
        uint8_t* dst = out->row(y);
        for (int x = 0; x < f->width; ++x) {
          dst[4 * x] = r[x];
          dst[4 * x + 1] = g[x];
          dst[4 * x + 2] = b[x];
          dst[4 * x + 3] = 255;
        }
      }
      return;
    }
    const auto format = static_cast<AVPixelFormat>(f->format);
    sws = sws_getCachedContext(sws, f->width, f->height, format, f->width, f->height,
                               AV_PIX_FMT_RGBA, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                               nullptr, nullptr, nullptr);
    if (sws == nullptr) {
      const char* fmt_name = av_get_pix_fmt_name(format);
      Fail(ErrorCode::kInvalidArgument, name, ": frames in pixel format ",
           fmt_name != nullptr ? fmt_name : "unknown", " cannot be converted to RGB");
    }
    const int* table = sws_getCoefficients(SwsColorspace(f));
    sws_setColorspaceDetails(sws, table, FullRange(f) ? 1 : 0, sws_getCoefficients(SWS_CS_DEFAULT),
                             1, 0, 1 << 16, 1 << 16);
    uint8_t* dst[4] = {out->data(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {static_cast<int>(out->stride()), 0, 0, 0};
    sws_scale(sws, f->data, f->linesize, 0, f->height, dst, dst_stride);
  }
};

VideoFileDecoder::VideoFileDecoder(std::span<const uint8_t> bytes, const VideoLimits& limits,
                                   std::string name, const VideoDecodeOptions& options)
    : state_(std::make_unique<State>()) {
  SetUpFfmpeg();
  State& s = *state_;
  s.name = std::move(name);
  s.limits = limits;
  s.options = options;
  s.bytes = bytes;
  if (static_cast<int64_t>(bytes.size()) > limits.max_encoded_bytes) {
    Fail(ErrorCode::kTooLarge, s.name, " is ", bytes.size(), " bytes; at most ",
         limits.max_encoded_bytes, " are accepted");
  }
  if (bytes.empty()) Fail(ErrorCode::kInvalidArgument, s.name, " is empty");

  {
    // The frame count: one packet per frame, demuxed without decoding.
    Demuxer counter(bytes, limits.max_frame_pixels, s.name);
    const AVCodecParameters* par = counter.stream()->codecpar;
    CheckFrameSize(par->width, par->height, limits, s.name);
    s.orientation = UprightOrientation(counter.stream());
    const bool turned = s.orientation >= 5;  // a quarter turn swaps the sides
    s.width = turned ? par->height : par->width;
    s.height = turned ? par->width : par->height;
    s.fps = FrameRate(counter.stream());
    if (!(s.fps > 0)) Fail(ErrorCode::kInvalidArgument, s.name, " has no frame rate");
    AVPacket* packet = av_packet_alloc();
    if (packet == nullptr) Fail(ErrorCode::kInternal, s.name, ": out of memory");
    // A packet the container marks for discarding (before an edit list's start) is
    // decoded as a reference but never shown: not a frame.
    bool timestamps = true;
    int64_t ordinal = 0;
    while (av_read_frame(counter.fmt(), packet) >= 0) {
      if (packet->stream_index == counter.stream_index()) {
        timestamps = timestamps && packet->pts != AV_NOPTS_VALUE;
        if (timestamps && (packet->flags & AV_PKT_FLAG_KEY)) {
          s.index.key_ordinals.push_back(ordinal);
          s.index.key_pts.push_back(packet->pts);
        }
        if (!(packet->flags & AV_PKT_FLAG_DISCARD)) {
          ++s.frames;
          if (timestamps) s.index.frame_pts.push_back(packet->pts);
        }
        ++ordinal;
      }
      av_packet_unref(packet);
      if (s.frames > limits.max_input_frames) break;
    }
    av_packet_free(&packet);
    std::vector<int64_t>& pts = s.index.frame_pts;
    std::sort(pts.begin(), pts.end());
    if (pts.size() > 1 && pts.front() == pts.back() && counter.stream()->avg_frame_rate.num == 0) {
      Fail(ErrorCode::kInvalidArgument, s.name,
           " has no frame rate: its frames all have one timestamp");
    }
    if (!timestamps || std::adjacent_find(pts.begin(), pts.end()) != pts.end()) pts.clear();
    s.declared_seconds = CutShortSeconds(counter.fmt(), counter.stream(), s.frames, s.fps);
  }
  if (s.frames == 0) Fail(ErrorCode::kInvalidArgument, s.name, " has no frames");
  CheckVideoLength(s.frames, s.fps, limits, s.name);

  s.demuxer = std::make_unique<Demuxer>(bytes, limits.max_frame_pixels, s.name);
  s.codec = avcodec_alloc_context3(s.demuxer->codec());
  s.packet = av_packet_alloc();
  s.frame = av_frame_alloc();
  s.last = av_frame_alloc();
  if (s.codec == nullptr || s.packet == nullptr || s.frame == nullptr || s.last == nullptr) {
    Fail(ErrorCode::kInternal, s.name, ": out of memory");
  }
  if (avcodec_parameters_to_context(s.codec, s.demuxer->stream()->codecpar) < 0) {
    Fail(ErrorCode::kInvalidArgument, s.name, " has video parameters qvl cannot use");
  }
  s.codec->max_pixels = limits.max_frame_pixels;
  // Frame threads decode the next frame while one finishes; libavcodec's frame
  // threading gives the frames single-threaded decoding gives, bit for bit.
  s.codec->thread_count = std::max(1, options.threads);
  s.codec->thread_type = FF_THREAD_FRAME;
  const int opened = avcodec_open2(s.codec, s.demuxer->codec(), nullptr);
  if (opened < 0) {
    Fail(ErrorCode::kInvalidArgument, s.name, ": its ", s.demuxer->codec()->name,
         " video cannot be decoded: ", AvError(opened));
  }
}

VideoFileDecoder::~VideoFileDecoder() = default;

int64_t VideoFileDecoder::frame_count() const { return state_->frames; }
double VideoFileDecoder::fps() const { return state_->fps; }
int64_t VideoFileDecoder::decoded_frames() const { return state_->decoded; }
double VideoFileDecoder::declared_seconds() const { return state_->declared_seconds; }
int VideoFileDecoder::width() const { return state_->width; }
int VideoFileDecoder::height() const { return state_->height; }

int64_t VideoFileDecoder::ReadFrame(int64_t index, RgbxImage* out) {
  State& s = *state_;
  if (index <= s.last_read || index >= s.frames) {
    Fail(ErrorCode::kInternal, s.name, ": frame ", index, " read after frame ", s.last_read, " of ",
         s.frames);
  }
  s.last_read = index;
  if (s.seeks()) s.SkipToKeyframeOf(index);
  // Frames before `index` are decoded, not converted; with timestamps a frame's index is
  // its place in presentation order, whatever order the decoder gives them in. A packet
  // that decodes to no frame leaves its place to the next frame that decodes.
  while (s.next <= index) {
    if (!s.DecodeNext()) {
      if (!s.have_last) Fail(ErrorCode::kInvalidArgument, s.name, " has no decodable frames");
      // Its packets promised more frames than decode: the latest one decoded is the end.
      s.frames = s.seen;
      break;
    }
    av_frame_unref(s.last);
    av_frame_move_ref(s.last, s.frame);
    s.have_last = true;
    s.next = s.RankOf(s.last) + 1;
    s.seen = std::max(s.seen, s.next);
  }
  s.Convert(s.last, out);
  return s.next - 1;
}

bool LooksLikeVideoFile(std::span<const uint8_t> bytes) {
  auto at = [&](size_t offset, std::string_view magic) {
    return bytes.size() >= offset + magic.size() &&
           std::memcmp(bytes.data() + offset, magic.data(), magic.size()) == 0;
  };
  if (at(4, "ftyp")) {
    // HEIF and AVIF still images share ISO BMFF's ftyp box.
    for (std::string_view brand : {"avif", "avis", "heic", "heix", "mif1", "msf1"}) {
      if (at(8, brand)) return false;
    }
    return true;
  }
  return at(0, "\x1A\x45\xDF\xA3") || (at(0, "RIFF") && at(8, "AVI ")) || at(0, "FLV") ||
         at(0, "GIF87a") || at(0, "GIF89a") || at(0, "OggS") ||
         (bytes.size() > 188 && bytes[0] == 0x47 && bytes[188] == 0x47);
}

}  // namespace qvl
