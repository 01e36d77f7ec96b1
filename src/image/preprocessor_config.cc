#include "image/preprocessor_config.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/mapped_file.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

class ConfigReader {
 public:
  ConfigReader(const Json& root, const std::string& source) : root_(root), source_(source) {}

  // The field, or nullptr when it is absent or null (transformers treats null as unset).
  const Json* Find(const Json& object, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const Json* Find(const char* key) const { return Find(root_, key); }

  [[noreturn]] void Bad(const std::string& field, const std::string& expected,
                        const Json& value) const {
    Fail(ErrorCode::kCorrupt, source_, ": field '", field, "' must be ", expected, " (got ",
         value.dump(), ")");
  }

  int64_t Integer(const Json& value, const std::string& field, int64_t low, int64_t high) const {
    if (!value.is_number_integer())
      Bad(field, StrCat("an integer in [", low, ", ", high, "]"), value);
    const int64_t v =
        value.is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(value.get<uint64_t>(), INT64_MAX))
            : value.get<int64_t>();
    if (v < low || v > high) Bad(field, StrCat("an integer in [", low, ", ", high, "]"), value);
    return v;
  }

  void ReadInt(const char* key, int64_t low, int64_t high, int64_t* out) const {
    if (const Json* v = Find(key)) *out = Integer(*v, key, low, high);
  }
  void ReadInt(const char* key, int low, int high, int* out) const {
    if (const Json* v = Find(key)) *out = static_cast<int>(Integer(*v, key, low, high));
  }

  void ReadBool(const char* key, bool* out) const {
    if (const Json* v = Find(key)) {
      if (!v->is_boolean()) Bad(key, "true or false", *v);
      *out = v->get<bool>();
    }
  }

  // A number or a list of 3 numbers (one per channel), as transformers accepts.
  void ReadChannels(const char* key, bool nonzero, std::array<float, 3>* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return;
    const char* expected = nonzero ? "a non-zero number or a list of 3 non-zero numbers"
                                   : "a number or a list of 3 numbers";
    if (v->is_number()) {
      out->fill(v->get<float>());
    } else if (v->is_array() && v->size() == 3) {
      for (size_t c = 0; c < 3; ++c) {
        if (!(*v)[c].is_number()) Bad(key, expected, *v);
        (*out)[c] = (*v)[c].get<float>();
      }
    } else {
      Bad(key, expected, *v);
    }
    for (const float x : *out) {
      if (nonzero && x == 0) Bad(key, expected, *v);
    }
  }

 private:
  const Json& root_;
  const std::string& source_;
};

}  // namespace

ImageProcessorParams ParsePreprocessorConfig(std::string_view json_text,
                                             const std::string& source) {
  // Error messages dump() the offending value, which recurses: a value nested a few
  // hundred thousand levels deep would overflow the stack.
  constexpr int kMaxDepth = 64;
  const Json::parser_callback_t limit_depth = [&](int depth, Json::parse_event_t event, Json&) {
    if (depth >= kMaxDepth &&
        (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)) {
      Fail(ErrorCode::kCorrupt, source, ": invalid JSON (nested deeper than ", kMaxDepth,
           " levels)");
    }
    return true;
  };
  Json root;
  try {
    root = Json::parse(json_text, limit_depth);
  } catch (const Json::exception& e) {
    Fail(ErrorCode::kCorrupt, source, ": invalid JSON (", e.what(), ")");
  }
  if (!root.is_object()) Fail(ErrorCode::kCorrupt, source, ": expected a JSON object");
  const ConfigReader reader(root, source);
  ImageProcessorParams p;
  constexpr int64_t kMaxPixels = int64_t{1} << 40;
  if (const Json* size = reader.Find("size")) {
    if (!size->is_object() || reader.Find(*size, "shortest_edge") == nullptr ||
        reader.Find(*size, "longest_edge") == nullptr) {
      reader.Bad("size", "an object with 'shortest_edge' and 'longest_edge'", *size);
    }
    p.min_pixels = reader.Integer((*size)["shortest_edge"], "size.shortest_edge", 1, kMaxPixels);
    p.max_pixels = reader.Integer((*size)["longest_edge"], "size.longest_edge", 1, kMaxPixels);
  }
  reader.ReadInt("min_pixels", 1, kMaxPixels, &p.min_pixels);
  reader.ReadInt("max_pixels", 1, kMaxPixels, &p.max_pixels);
  if (p.min_pixels > p.max_pixels) {
    Fail(ErrorCode::kCorrupt, source, ": the minimum pixel count (", p.min_pixels,
         ") is above the maximum (", p.max_pixels, ")");
  }
  reader.ReadInt("patch_size", 1, 1024, &p.patch_size);
  reader.ReadInt("temporal_patch_size", 1, 16, &p.temporal_patch_size);
  reader.ReadInt("merge_size", 1, 64, &p.merge_size);
  reader.ReadChannels("image_mean", false, &p.image_mean);
  reader.ReadChannels("image_std", true, &p.image_std);
  reader.ReadBool("do_rescale", &p.do_rescale);
  reader.ReadBool("do_normalize", &p.do_normalize);
  if (const Json* v = reader.Find("rescale_factor")) {
    if (!v->is_number() || v->get<double>() <= 0)
      reader.Bad("rescale_factor", "a positive number", *v);
    p.rescale_factor = v->get<double>();
  }
  if (const Json* v = reader.Find("do_resize"); v != nullptr && *v != Json(true)) {
    reader.Bad("do_resize", "true (qvl always applies smart_resize)", *v);
  }
  if (const Json* v = reader.Find("resample"); v != nullptr && *v != Json(3)) {
    reader.Bad("resample", "3 (bicubic, the only filter qvl implements)", *v);
  }
  return p;
}

ImageProcessorParams LoadPreprocessorConfig(const std::string& path) {
  return ParsePreprocessorConfig(ReadFileToString(path), path);
}

}  // namespace qvl
