// GIF through giflib: the first frame, placed on the logical screen the way Pillow's
// GifImagePlugin does for frame 0:
// - the canvas is the logical screen, grown to contain the frame if it sticks out;
// - pixels outside the frame get the frame's transparent index (graphic control
//   extension before the frame), else index 0;
// - colours come from the local colour table, else the global one; a table that is the
//   identity grey ramp, or no table, means mode L (grey level = index). Indices past
//   the table are black. Transparency is otherwise ignored (convert("RGB") of mode P).
#include <gif_lib.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "image/format_decoders.h"
#include "image/pixel_convert.h"

namespace qvl {
namespace {

struct GifSource {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
  bool truncated = false;
};

int ReadGif(GifFileType* gif, GifByteType* dst, int count) {
  auto* source = static_cast<GifSource*>(gif->UserData);
  const size_t available = source->bytes.size() - source->offset;
  const size_t n = std::min(available, static_cast<size_t>(count));
  if (n < static_cast<size_t>(count)) source->truncated = true;
  std::memcpy(dst, source->bytes.data() + source->offset, n);
  source->offset += n;
  return static_cast<int>(n);
}

struct GifGuard {
  GifFileType* gif;
  ~GifGuard() {
    int error = 0;
    if (gif != nullptr) DGifCloseFile(gif, &error);
  }
};

[[noreturn]] void FailGif(const std::string& name, const GifSource& source, int error) {
  if (source.truncated) FailTruncated(name, "GIF");
  const char* text = GifErrorString(error);
  FailCorrupt(name, "GIF", text != nullptr ? text : "unknown giflib error");
}

bool IsGreyRamp(const ColorMapObject& map) {
  for (int i = 0; i < map.ColorCount; ++i) {
    const GifColorType& c = map.Colors[i];
    if (c.Red != i || c.Green != i || c.Blue != i) return false;
  }
  return true;
}

RgbxPalette PaletteFor(const ColorMapObject* map) {
  if (map == nullptr || IsGreyRamp(*map)) {
    RgbxPalette grey;
    for (int i = 0; i < 256; ++i) {
      grey[4 * i] = grey[4 * i + 1] = grey[4 * i + 2] = static_cast<uint8_t>(i);
      grey[4 * i + 3] = 255;
    }
    return grey;
  }
  return MakePalette(reinterpret_cast<const uint8_t*>(map->Colors), map->ColorCount,
                     sizeof(GifColorType), 0, 1, 2);
}

}  // namespace

int DecodeGif(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out, std::vector<uint8_t>* scratch) {
  GifSource source{bytes};
  int error = 0;
  GifGuard guard{DGifOpen(&source, ReadGif, &error)};
  GifFileType* gif = guard.gif;
  if (gif == nullptr) FailGif(name, source, error);
  int transparent_index = -1;
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) FailGif(name, source, gif->Error);
    if (type == TERMINATE_RECORD_TYPE) FailCorrupt(name, "GIF", "the file holds no image");
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* block = nullptr;
      if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) FailGif(name, source, gif->Error);
      // Graphic control block: length, flags, delay (2 bytes), transparent index.
      if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4 && (block[1] & 1)) {
        transparent_index = block[4];
      }
      while (block != nullptr) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) FailGif(name, source, gif->Error);
      }
      continue;
    }
    if (type == IMAGE_DESC_RECORD_TYPE) break;
  }
  if (DGifGetImageDesc(gif) == GIF_ERROR) FailGif(name, source, gif->Error);
  const GifImageDesc& frame = gif->Image;
  const int width = std::max(gif->SWidth, frame.Left + frame.Width);
  const int height = std::max(gif->SHeight, frame.Top + frame.Height);
  CheckDecodedSize(width, height, limits, name);
  const RgbxPalette palette =
      PaletteFor(frame.ColorMap != nullptr ? frame.ColorMap : gif->SColorMap);
  out->Reset(width, height);
  const uint8_t fill = static_cast<uint8_t>(transparent_index >= 0 ? transparent_index : 0);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = out->row(y);
    for (int x = 0; x < width; ++x) std::memcpy(row + 4 * x, &palette[4 * fill], 4);
  }
  if (frame.Width <= 0 || frame.Height <= 0) return 1;
  scratch->resize(frame.Width);
  const auto read_row = [&](int y) {
    if (DGifGetLine(gif, scratch->data(), frame.Width) == GIF_ERROR) {
      FailGif(name, source, gif->Error);
    }
    ExpandPaletteRow(scratch->data(), frame.Width, palette,
                     out->row(frame.Top + y) + 4 * frame.Left);
  };
  if (frame.Interlace) {
    static constexpr int kStart[4] = {0, 4, 2, 1};
    static constexpr int kStep[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; ++pass) {
      for (int y = kStart[pass]; y < frame.Height; y += kStep[pass]) read_row(y);
    }
  } else {
    for (int y = 0; y < frame.Height; ++y) read_row(y);
  }
  return 1;
}

}  // namespace qvl
