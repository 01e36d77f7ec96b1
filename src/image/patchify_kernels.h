// Patch flattening kernels: scalar reference and AVX2 twin (internal to image/;
// PatchifyFrames chooses, the tests compare them). Arguments as for PatchifyFrames.
#pragma once

#include "image/patchify.h"

namespace qvl::patchify {

void PatchifyScalar(const RgbxImage* const* frames, const NormalizationTable& table,
                    const PatchLayout& layout, float* out);

#if defined(__x86_64__)
// Requires layout.patch_size % 8 == 0.
void PatchifyAvx2(const RgbxImage* const* frames, const NormalizationTable& table,
                  const PatchLayout& layout, float* out);
#endif

}  // namespace qvl::patchify
