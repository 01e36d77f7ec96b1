#include "image/preprocessor_config.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"
#include "base/mapped_file.h"
#include "image/image_limits.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

// A number or a list of 3 numbers (one per channel), as transformers accepts.
void ReadChannels(const JsonFieldReader& reader, const char* key, bool nonzero,
                  std::array<float, 3>* out) {
  const Json* v = reader.Find(key);
  if (v == nullptr) return;
  const char* expected = nonzero ? "must be a non-zero number or a list of 3 non-zero numbers"
                                 : "must be a number or a list of 3 numbers";
  if (v->is_number()) {
    out->fill(v->get<float>());
  } else if (v->is_array() && v->size() == 3) {
    for (size_t c = 0; c < 3; ++c) {
      if (!(*v)[c].is_number()) {
        reader.FailField(key, StrCat(expected, ", got a list holding ", JsonTypeName((*v)[c])));
      }
      (*out)[c] = (*v)[c].get<float>();
    }
  } else if (v->is_array()) {
    reader.FailField(key, StrCat(expected, ", got a list of ", v->size()));
  } else {
    reader.FailField(key, StrCat(expected, ", got ", JsonTypeName(*v)));
  }
  for (const float x : *out) {
    if (nonzero && x == 0) reader.FailField(key, StrCat(expected, ", got a zero"));
  }
}

int AsInt(int64_t value) { return static_cast<int>(value); }

}  // namespace

ImageProcessorParams ParsePreprocessorConfig(std::string_view json_text,
                                             const std::string& source) {
  const Json root = ParseJsonText(json_text, source);
  const JsonFieldReader reader(root, source, "");
  ImageProcessorParams p;
  if (const std::optional<JsonFieldReader> size = reader.OptionalObject("size")) {
    p.min_pixels = size->Int("shortest_edge", 1, kMaxPixelBudget);
    p.max_pixels = size->Int("longest_edge", 1, kMaxPixelBudget);
  }
  p.min_pixels = reader.OptionalInt("min_pixels", 1, kMaxPixelBudget).value_or(p.min_pixels);
  p.max_pixels = reader.OptionalInt("max_pixels", 1, kMaxPixelBudget).value_or(p.max_pixels);
  if (p.min_pixels > p.max_pixels) {
    Fail(ErrorCode::kCorrupt, source, ": the minimum pixel count (", p.min_pixels,
         ") is above the maximum (", p.max_pixels, ")");
  }
  p.patch_size = AsInt(reader.OptionalInt("patch_size", 1, 1024).value_or(p.patch_size));
  p.temporal_patch_size =
      AsInt(reader.OptionalInt("temporal_patch_size", 1, 16).value_or(p.temporal_patch_size));
  p.merge_size = AsInt(reader.OptionalInt("merge_size", 1, 64).value_or(p.merge_size));
  ReadChannels(reader, "image_mean", false, &p.image_mean);
  ReadChannels(reader, "image_std", true, &p.image_std);
  p.do_rescale = reader.OptionalBool("do_rescale", p.do_rescale);
  p.do_normalize = reader.OptionalBool("do_normalize", p.do_normalize);
  if (const std::optional<double> factor = reader.OptionalNumber("rescale_factor")) {
    if (!(*factor > 0))
      reader.FailField("rescale_factor", StrCat("must be positive, got ", *factor));
    p.rescale_factor = *factor;
  }
  if (!reader.OptionalBool("do_resize", true)) {
    reader.FailField("do_resize", "must be true (qvl always applies smart_resize)");
  }
  if (const std::optional<int64_t> resample = reader.OptionalInt("resample", 0, 5);
      resample && *resample != 3) {
    reader.FailField(
        "resample", StrCat("must be 3 (bicubic, the only filter qvl implements), got ", *resample));
  }
  return p;
}

ImageProcessorParams LoadPreprocessorConfig(const std::string& path) {
  return ParsePreprocessorConfig(ReadFileToString(path), path);
}

}  // namespace qvl
