// Test and benchmark helper: video clips encoded in process with libavcodec's encoders,
// of synthetic frames whose content tells one frame from the next.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"

namespace qvl {

// A clip's bytes as the decoder takes them.
inline std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The error `fn` throws, or kInternal "no error" when it throws none.
inline Error ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorCode::kInternal, "no error");
}

// The file a muxer wrote into its dynamic buffer (after av_write_trailer); frees the buffer.
inline std::string CloseDynamicBuffer(AVFormatContext* fmt) {
  uint8_t* buffer = nullptr;
  const int size = avio_close_dyn_buf(fmt->pb, &buffer);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  av_free(buffer);
  return out;
}

// A synthetic RGB frame: gradients and a square that moves 8 pixels right per frame k.
inline std::vector<uint8_t> SyntheticRgb(int w, int h, int k) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      const bool square = x >= 8 * k + 16 && x < 8 * k + 48 && y >= 24 && y < 56;
      if (y >= h - 32) {  // a flat band: no compression error, only the colour matrix
        p[0] = 200, p[1] = 60, p[2] = 30;
        continue;
      }
      p[0] = square ? 230 : static_cast<uint8_t>(x * 255 / w);
      p[1] = square ? 40 : static_cast<uint8_t>(y * 255 / h);
      p[2] = static_cast<uint8_t>(128 + 60 * ((x / 16 + y / 16) % 2));
    }
  }
  return rgb;
}

struct ClipSpec {
  const char* muxer = "mp4";
  const char* encoder = "mpeg4";  // libavcodec's name: mpeg4, libx264, libvpx-vp9, ...
  int width = 128, height = 96;
  int frames = 7;
  int fps = 5;
  int gop = 3;       // frames from one keyframe to the next
  int b_frames = 0;  // the most B-frames in a row (frames shown before one decoded earlier)
  int noise = 0;     // film grain of up to +-noise per value, new in every frame
  // Muxed into a temporary file, as ffmpeg writes to disk, instead of a memory buffer:
  // MP4 then has its index before the frames (faststart), so that a file cut short
  // still opens and declares its whole length.
  bool seekable = false;
  // Degrees clockwise the display matrix turns the frames by (av_display_rotation_set),
  // as a phone writes a portrait clip; 0 = no matrix.
  int rotation = 0;
  // Packets before the first frame and after the last (encoder mpeg4 only) that hold a
  // VOP that is not coded (vop_coded = 0, as DivX and Xvid write for a dropped frame): a
  // decoder gives no frame for them, so the stream has fewer frames than packets. The
  // encoded frames follow the first ones in time.
  int not_coded_before = 0;
  int not_coded_after = 0;
};

// An MPEG-4 Part 2 VOP that is not coded, for a stream whose VOL header has a time
// resolution of `fps` ticks a second: start code, P type, no whole seconds, a marker,
// increment 0 in as many bits as the resolution needs, a marker, vop_coded = 0, then
// stuffing to the byte.
inline std::vector<uint8_t> NotCodedVop(int fps) {
  int increment_bits = 1;
  while ((1 << increment_bits) < fps) ++increment_bits;
  std::string bits("0101");
  bits.append(increment_bits, '0');
  bits.append("100");
  while (bits.size() % 8 != 0) bits.push_back('1');
  std::vector<uint8_t> vop = {0, 0, 1, 0xB6};
  for (size_t i = 0; i < bits.size(); i += 8) {
    vop.push_back(static_cast<uint8_t>(std::stoi(bits.substr(i, 8), nullptr, 2)));
  }
  return vop;
}

// The bytes of the file at `path`, which is then removed.
inline std::string TakeFile(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buffer[1 << 16];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), f)) > 0;) out.append(buffer, n);
    std::fclose(f);
  }
  std::remove(path.c_str());
  return out;
}

// The clip in `spec.muxer`'s container, in memory (4:2:0 YUV, high quality; GIF in 3-3-2
// RGB); empty when
// this libavcodec has no such encoder or the encoder or muxer refuses the settings.
inline std::string EncodeClip(const ClipSpec& spec) {
  const AVCodec* codec = avcodec_find_encoder_by_name(spec.encoder);
  if (codec == nullptr) return "";
  const int w = spec.width, h = spec.height;
  AVFormatContext* fmt = nullptr;
  if (avformat_alloc_output_context2(&fmt, nullptr, spec.muxer, nullptr) < 0) return "";
  AVStream* stream = avformat_new_stream(fmt, nullptr);
  AVCodecContext* enc = avcodec_alloc_context3(codec);
  enc->width = w;
  enc->height = h;
  // GIF's encoder takes palette formats only: 3-3-2 bit RGB.
  const bool gif = std::string(spec.encoder) == "gif";
  enc->pix_fmt = gif ? AV_PIX_FMT_RGB8 : AV_PIX_FMT_YUV420P;
  enc->time_base = {1, spec.fps};
  enc->framerate = {spec.fps, 1};
  enc->gop_size = spec.gop;
  enc->keyint_min = spec.gop;
  enc->max_b_frames = spec.b_frames;
  enc->thread_count = 1;
  AVDictionary* options = nullptr;
  if (std::string(spec.encoder) == "mpeg4") {
    enc->flags |= AV_CODEC_FLAG_QSCALE;
    enc->global_quality = FF_QP2LAMBDA * 2;
  } else if (std::string(spec.encoder) == "libx264") {
    av_dict_set(&options, "preset", "veryfast", 0);
    av_dict_set(&options, "crf", "18", 0);
    av_dict_set(&options, "x264-params", "scenecut=0", 0);
  } else if (std::string(spec.encoder) == "libvpx-vp9") {
    av_dict_set(&options, "deadline", "realtime", 0);
    av_dict_set(&options, "cpu-used", "8", 0);
    av_dict_set(&options, "crf", "20", 0);
    enc->bit_rate = 0;
  }
  if (fmt->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  const int opened = avcodec_open2(enc, codec, &options);
  av_dict_free(&options);
  if (opened < 0) {
    avcodec_free_context(&enc);
    avformat_free_context(fmt);
    return "";
  }
  avcodec_parameters_from_context(stream->codecpar, enc);
  stream->time_base = enc->time_base;
  if (spec.rotation != 0) {
    auto* matrix = reinterpret_cast<int32_t*>(
        av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t)));
    av_display_rotation_set(matrix, spec.rotation);
  }
  std::string path;
  AVDictionary* mux_options = nullptr;
  if (spec.seekable) {
    char name[] = "/tmp/qvl_clip_XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path = name;
    avio_open(&fmt->pb, path.c_str(), AVIO_FLAG_READ_WRITE);
    av_freep(&fmt->url);
    fmt->url = av_strdup(path.c_str());  // faststart reopens the file to move the index
    av_dict_set(&mux_options, "movflags", "+faststart", 0);
  } else {
    avio_open_dyn_buf(&fmt->pb);
  }
  const int header = avformat_write_header(fmt, &mux_options);
  av_dict_free(&mux_options);
  if (header < 0) {
    if (spec.seekable) {
      avio_closep(&fmt->pb);
      TakeFile(path);
    } else {
      uint8_t* unused = nullptr;
      avio_close_dyn_buf(fmt->pb, &unused);
      av_free(unused);
    }
    avcodec_free_context(&enc);
    avformat_free_context(fmt);
    return "";
  }
  SwsContext* sws = sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, enc->pix_fmt,
                                   SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr, nullptr);
  AVFrame* frame = av_frame_alloc();
  frame->format = enc->pix_fmt;
  frame->width = w;
  frame->height = h;
  av_frame_get_buffer(frame, 0);
  AVPacket* packet = av_packet_alloc();
  auto drain = [&] {
    while (avcodec_receive_packet(enc, packet) == 0) {
      packet->pts += spec.not_coded_before;
      packet->dts += spec.not_coded_before;
      packet->duration = 1;
      av_packet_rescale_ts(packet, enc->time_base, stream->time_base);
      packet->stream_index = stream->index;
      av_interleaved_write_frame(fmt, packet);
    }
  };
  auto not_coded = [&](int64_t pts) {
    const std::vector<uint8_t> vop = NotCodedVop(spec.fps);
    av_new_packet(packet, static_cast<int>(vop.size()));
    std::copy(vop.begin(), vop.end(), packet->data);
    packet->pts = packet->dts = pts;
    packet->duration = 1;
    av_packet_rescale_ts(packet, enc->time_base, stream->time_base);
    packet->stream_index = stream->index;
    av_interleaved_write_frame(fmt, packet);
  };
  for (int k = 0; k < spec.not_coded_before; ++k) not_coded(k);
  for (int k = 0; k < spec.frames; ++k) {
    av_frame_make_writable(frame);
    std::vector<uint8_t> rgb = SyntheticRgb(w, h, k);
    if (spec.noise > 0) {
      uint32_t state = 2463534242u + static_cast<uint32_t>(k);
      for (uint8_t& v : rgb) {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;  // xorshift32
        const int grain = static_cast<int>(state % (2 * spec.noise + 1)) - spec.noise;
        v = static_cast<uint8_t>(std::clamp(v + grain, 0, 255));
      }
    }
    const uint8_t* src[1] = {rgb.data()};
    const int src_stride[1] = {3 * w};
    sws_scale(sws, src, src_stride, 0, h, frame->data, frame->linesize);
    frame->pts = k;
    avcodec_send_frame(enc, frame);
    drain();
  }
  avcodec_send_frame(enc, nullptr);
  drain();
  for (int k = 0; k < spec.not_coded_after; ++k) {
    not_coded(spec.not_coded_before + spec.frames + k);
  }
  av_write_trailer(fmt);
  std::string out;
  if (spec.seekable) {
    avio_closep(&fmt->pb);
    out = TakeFile(path);
  } else {
    out = CloseDynamicBuffer(fmt);
  }
  av_packet_free(&packet);
  av_frame_free(&frame);
  sws_freeContext(sws);
  avcodec_free_context(&enc);
  avformat_free_context(fmt);
  return out;
}

}  // namespace qvl
