// The patch grid of one image (or video) as the vision tower sees it.
#pragma once

#include <cstdint>

namespace qvl {

struct GridThw {
  int64_t t = 1;  // temporal patches (1 for an image)
  int64_t h = 0;  // patch rows (16 px each)
  int64_t w = 0;  // patch columns

  int64_t patches() const { return t * h * w; }
  // Tokens the language model sees after the 2x2 merge.
  int64_t tokens(int merge) const { return t * (h / merge) * (w / merge); }
};

}  // namespace qvl
