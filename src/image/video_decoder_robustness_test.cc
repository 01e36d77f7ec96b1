// Hostile and odd video files: what a file declares (frame size, frame count, frame
// rate) is checked before the memory or time it would cost is spent.
#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <sys/resource.h>

#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "image/video_clip_for_test.h"
#include "image/video_decoder.h"

namespace qvl {
namespace {

struct RawStream {
  const char* muxer = "matroska";
  int width = 64, height = 64;
  AVRational time_base = {1, 25};
  AVRational frame_rate = {25, 1};
  int packets = 4;
  int64_t pts_step = 1;  // 0: every packet at the same time
};

// A container holding `packets` packets of a few bytes each that claim to be MPEG-4
// video of the stated size and rate: nothing in them was encoded, so whatever the file
// declares is all a decoder could go by.
std::string MuxRawPackets(const RawStream& spec) {
  AVFormatContext* fmt = nullptr;
  EXPECT_GE(avformat_alloc_output_context2(&fmt, nullptr, spec.muxer, nullptr), 0);
  AVStream* stream = avformat_new_stream(fmt, nullptr);
  stream->codecpar->codec_type = AVMEDIA_TYPE_VIDEO;
  stream->codecpar->codec_id = AV_CODEC_ID_MPEG4;
  stream->codecpar->width = spec.width;
  stream->codecpar->height = spec.height;
  stream->time_base = spec.time_base;
  stream->avg_frame_rate = spec.frame_rate;
  stream->r_frame_rate = spec.frame_rate;
  avio_open_dyn_buf(&fmt->pb);
  EXPECT_GE(avformat_write_header(fmt, nullptr), 0);
  AVPacket* packet = av_packet_alloc();
  for (int i = 0; i < spec.packets; ++i) {
    av_new_packet(packet, 4);
    packet->data[0] = 0, packet->data[1] = 0, packet->data[2] = 1, packet->data[3] = 0xB6;
    packet->pts = packet->dts = i * spec.pts_step;
    packet->duration = spec.pts_step;
    packet->flags = i == 0 ? AV_PKT_FLAG_KEY : 0;
    packet->stream_index = 0;
    av_write_frame(fmt, packet);
    av_packet_unref(packet);  // av_write_frame leaves the packet to its caller
  }
  av_write_trailer(fmt);
  std::string out = CloseDynamicBuffer(fmt);
  av_packet_free(&packet);
  avformat_free_context(fmt);
  return out;
}

// A few hundred bytes that declare 30000x30000 frames (900 megapixels, 2.7 GB of RGB a
// frame): refused from the container's parameters, before find_stream_info could
// decode a frame or any frame buffer is allocated.
TEST(VideoDecoderRobustness, HugeDeclaredFrameSizeIsRefusedBeforeDecoding) {
  const std::string file = MuxRawPackets({.width = 30000, .height = 30000});
  ASSERT_LT(file.size(), 1000u);
  const Error e = ErrorOf([&] { VideoFileDecoder(Bytes(file), {}, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge) << e.what();
  EXPECT_STREQ(e.what(),
               "video 1 has frames of 30000x30000 pixels; at most 16777216 pixels per frame "
               "are accepted");
}

// Many tiny packets: counted, not decoded, and refused past the frame limit (the count
// stops there, so a file of millions of packets costs no more).
TEST(VideoDecoderRobustness, HugeFrameCountIsRefusedBeforeDecoding) {
  const std::string file = MuxRawPackets({.packets = 5000});
  VideoLimits limits;
  limits.max_input_frames = 1000;
  const Error e = ErrorOf([&] { VideoFileDecoder(Bytes(file), limits, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge) << e.what();
  EXPECT_NE(std::string(e.what()).find("has more than 1000 frames"), std::string::npos) << e.what();
}

// A clip that lasts forever at its declared rate is refused by its length. One without a
// rate whose frames all have one timestamp has no rate at all (libavformat would guess
// one tick of its time base, 1000 fps for Matroska): refused as such.
TEST(VideoDecoderRobustness, AbsurdOrMissingFrameRate) {
  const std::string slow = MuxRawPackets(
      {.time_base = {1, 1000}, .frame_rate = {1, 1000}, .packets = 4, .pts_step = 1000000});
  Error e = ErrorOf([&] { VideoFileDecoder(Bytes(slow), {}, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge) << e.what();
  EXPECT_NE(std::string(e.what()).find("seconds long; at most 600"), std::string::npos) << e.what();

  const std::string still =
      MuxRawPackets({.time_base = {1, 1000}, .frame_rate = {0, 1}, .packets = 4, .pts_step = 0});
  e = ErrorOf([&] { VideoFileDecoder(Bytes(still), {}, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  EXPECT_STREQ(e.what(), "video 1 has no frame rate: its frames all have one timestamp");
}

// A file cut short (a partial upload or download) still opens where its index or header
// comes first, and holds fewer frames than it declares: the decoder reads what is
// there and says how long the file claims to be, so that the user can be told. A whole
// file says nothing.
TEST(VideoDecoderRobustness, AFileCutShortSaysHowLongItClaimsToBe) {
  for (const char* muxer : {"mp4", "matroska"}) {
    SCOPED_TRACE(muxer);
    // 50 frames at 10 fps: 5 seconds.
    const ClipSpec spec{.muxer = muxer, .frames = 50, .fps = 10, .gop = 10, .seekable = true};
    const std::string whole = EncodeClip(spec);
    ASSERT_FALSE(whole.empty());
    VideoFileDecoder all(Bytes(whole), {}, "video 1");
    EXPECT_EQ(all.frame_count(), 50);
    EXPECT_EQ(all.declared_seconds(), 0);

    const std::string cut = whole.substr(0, whole.size() * 2 / 5);
    VideoFileDecoder part(Bytes(cut), {}, "video 1");
    EXPECT_GE(part.frame_count(), 2);
    EXPECT_LT(part.frame_count(), 30);
    EXPECT_NEAR(part.declared_seconds(), 5.0, 0.1);
    RgbxImage last;
    part.ReadFrame(part.frame_count() - 1, &last);
    EXPECT_EQ(last.width(), spec.width);
  }
  // An MP4 written as a stream has its index last: cut, it cannot be read, and the
  // error says why.
  const std::string streamed_mp4 = EncodeClip({.frames = 50, .fps = 10});
  const Error e = ErrorOf([&] {
    VideoFileDecoder(Bytes(streamed_mp4.substr(0, streamed_mp4.size() / 2)), {}, "video 1");
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("(an MP4 or MOV file without its index, as one cut short "
                                       "before the end, cannot be read)"),
            std::string::npos)
      << e.what();
}

// The frame a SyntheticRgb frame of a clip at its size is: where its square's left edge
// is on row 40 (8 pixels right per frame); -1 without a square.
int ShownFrame(const RgbxImage& frame) {
  for (int x = 0; x < frame.width(); ++x) {
    const uint8_t* p = frame.row(40) + 4 * x;
    if (p[0] > 200 && p[1] < 80) return (x - 16 + 4) / 8;
  }
  return -1;
}

// Packets that decode to no frame after the last frame (an MPEG-4 stream of 7 frames at
// 5 fps and 5 VOPs that are not coded): the packets promise 12 frames, the stream ends
// after 7. Asked for a frame past its end, the decoder gives its last frame, says so by
// its index, and from then on counts 7 frames; a frame before the end is itself.
TEST(VideoDecoderRobustness, AStreamThatEndsBeforeItsPacketsGivesItsLastFrameOnce) {
  for (const char* muxer : {"matroska", "mp4"}) {
    SCOPED_TRACE(muxer);
    const std::string clip = EncodeClip({.muxer = muxer, .frames = 7, .not_coded_after = 5});
    ASSERT_FALSE(clip.empty());
    VideoFileDecoder decoder(Bytes(clip), {}, "video 1");
    EXPECT_EQ(decoder.frame_count(), 12);
    RgbxImage frame;
    EXPECT_EQ(decoder.ReadFrame(4, &frame), 4);
    EXPECT_EQ(ShownFrame(frame), 4);
    EXPECT_EQ(decoder.ReadFrame(9, &frame), 6);
    EXPECT_EQ(ShownFrame(frame), 6);
    EXPECT_EQ(decoder.frame_count(), 7);
  }
}

// Packets that decode to no frame before the first (a recording that starts between
// keyframes writes such): frame k of the packets is the k-th shown, so the first frame
// given is frame 3, which stands for frames 0 to 3; the count stays that of the packets.
TEST(VideoDecoderRobustness, PacketsWithoutAFrameLeaveTheirPlaceToTheNextFrame) {
  const std::string clip = EncodeClip({.muxer = "matroska", .frames = 7, .not_coded_before = 3});
  ASSERT_FALSE(clip.empty());
  VideoFileDecoder decoder(Bytes(clip), {}, "video 1");
  EXPECT_EQ(decoder.frame_count(), 10);
  RgbxImage frame;
  EXPECT_EQ(decoder.ReadFrame(1, &frame), 3);
  EXPECT_EQ(ShownFrame(frame), 0);
  EXPECT_EQ(decoder.ReadFrame(2, &frame), 3);
  EXPECT_EQ(decoder.ReadFrame(6, &frame), 6);
  EXPECT_EQ(ShownFrame(frame), 3);
  EXPECT_EQ(decoder.frame_count(), 10);
}

void Put32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (24 - 8 * i));
}

int64_t PeakRssKib() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// An MP4 of 2.6 KB whose sample tables declare 80 million one-byte frames in one chunk:
// libavformat would build an index of 1.9 GB (3.2 GB of peak memory, 7 s) while opening
// it. FFmpeg's allocations are capped, so the table fails to load and nothing is spent.
TEST(VideoDecoderRobustness, HugeDeclaredSampleTableIsNotBuilt) {
  std::string mp4 = EncodeClip({.frames = 4, .gop = 100});
  ASSERT_FALSE(mp4.empty());
  const size_t stsz = mp4.find("stsz"), stts = mp4.find("stts"), stsc = mp4.find("stsc");
  ASSERT_NE(stsz, std::string::npos);
  ASSERT_NE(stts, std::string::npos);
  ASSERT_NE(stsc, std::string::npos);
  constexpr uint32_t kSamples = 80000000;
  Put32(mp4, stsz + 8, 1);  // every sample 1 byte: no table of sizes needed
  Put32(mp4, stsz + 12, kSamples);
  Put32(mp4, stts + 12, kSamples);  // the one entry: kSamples samples of one tick
  Put32(mp4, stsc + 16, kSamples);  // the one chunk holds them all
  const int64_t before = PeakRssKib();
  const Error e = ErrorOf([&] { VideoFileDecoder(Bytes(mp4), {}, "video 1"); });
  EXPECT_NE(e.code(), ErrorCode::kInternal) << e.what();
  EXPECT_LT(PeakRssKib() - before, 256 << 10) << "KiB more at the peak";
}

}  // namespace
}  // namespace qvl
