// Width and height of an image in pixels.
#pragma once

namespace qvl {

struct ImageSize {
  int width = 0;
  int height = 0;
  friend bool operator==(const ImageSize&, const ImageSize&) = default;
};

}  // namespace qvl
