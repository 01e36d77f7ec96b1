// What a video stream's parameters say about its frames, read from libavformat's and
// libavcodec's structures: their rate, the length the container declares, which way up
// they are shown, and the colour matrix and range to convert them with.
#pragma once

#include <cstdint>

struct AVFormatContext;
struct AVFrame;
struct AVStream;

namespace qvl {

// Frames per second: the average rate, else the base rate; 0 when the stream gives none.
double FrameRate(const AVStream* s);

// A file cut short (a partial download, a recording that never finished): the seconds
// its container declares for the stream, when `frames` at `fps` fall short of them by
// more than half a second and three frames; 0 otherwise.
double CutShortSeconds(const AVFormatContext* fmt, const AVStream* s, int64_t frames, double fps);

// The EXIF orientation (exif_orientation.h) that shows the stream's frames upright, as
// players and ffmpeg's autorotation do: phones store portrait clips as landscape frames
// and a display matrix that turns them. 1 (as stored) without one, and for a matrix
// that mirrors or turns by other than a multiple of 90 degrees.
int UprightOrientation(const AVStream* s);

// swscale's colour matrix (SWS_CS_*) for a decoded frame, and whether its range is full.
int SwsColorspace(const AVFrame* f);
bool FullRange(const AVFrame* f);

}  // namespace qvl
