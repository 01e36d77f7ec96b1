#include "model/visual_features.h"

namespace qvl {

void AppendVisualFeatures(const VisionOutput* vis, int64_t tokens, int64_t d,
                          size_t deepstack_layers, VisualFeatures* f) {
  AppendVisualFeatureRows(vis, 0, tokens, d, deepstack_layers, f);
}

void AppendVisualFeatureRows(const VisionOutput* vis, int64_t first, int64_t count, int64_t d,
                             size_t deepstack_layers, VisualFeatures* f) {
  if (f->deepstack.size() < deepstack_layers) f->deepstack.resize(deepstack_layers);
  for (int64_t k = first; k < first + count; ++k) {
    f->embeds.push_back(vis ? vis->embeds.data() + k * d : nullptr);
    for (size_t l = 0; l < deepstack_layers; ++l) {
      f->deepstack[l].push_back(vis ? vis->deepstack[l].data() + k * d : nullptr);
    }
  }
}

}  // namespace qvl
