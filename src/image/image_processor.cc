#include "image/image_processor.h"

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/image_decoder.h"
#include "image/patchify.h"
#include "image/smart_resize.h"

namespace qvl {

int64_t NumImageTokens(const PreprocessedImage& image, const ImageProcessorParams& params) {
  return image.num_patches() / (int64_t{params.merge_size} * params.merge_size);
}

void ImageWorkspace::Release() {
  decoded_.Release();
  oriented_.Release();
  resized_.Release();
  resize_ = ResizeScratch();
  scratch_ = std::vector<uint8_t>();
}

PreprocessedImage PreprocessImage(std::span<const uint8_t> bytes,
                                  const ImageProcessorParams& params, const ImageBudget& budget,
                                  const ImageLimits& limits, const std::string& name,
                                  ImageWorkspace* workspace) {
  ImageWorkspace temporary;
  ImageWorkspace& ws = workspace != nullptr ? *workspace : temporary;
  const PixelRange range = ResolveImageBudget(budget, params);

  PreprocessedImage result;
  const DecodedImageInfo info = DecodeImage(bytes, limits, name, &ws.decoded_, &ws.scratch_);
  result.format = info.format;
  const RgbxImage* image = &ws.decoded_;
  if (OrientationTransforms(info.orientation)) {
    ApplyOrientation(ws.decoded_, info.orientation, &ws.oriented_);
    image = &ws.oriented_;
  }
  result.original = {image->width(), image->height()};
  result.resized =
      SmartResize(result.original, params.factor(), range.min_pixels, range.max_pixels, name);
  if (result.resized != result.original) {
    BicubicResize(*image, result.resized, &ws.resize_, &ws.resized_);
    image = &ws.resized_;
  }

  const int patch = params.patch_size;
  result.grid_thw = {1, result.resized.height / patch, result.resized.width / patch};
  result.pixel_values.resize(static_cast<size_t>(result.num_patches()) * params.patch_values());
  const NormalizationTable table = MakeNormalizationTable(params);
  Patchify(*image, table, {patch, params.temporal_patch_size, params.merge_size},
           result.pixel_values.data());
  return result;
}

}  // namespace qvl
