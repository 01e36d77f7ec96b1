#include "golden_tensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "base/dtype.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "hub/content_digest.h"
#include "image/image_processor.h"
#include "image/preprocessor_config.h"
#include "image/video_frame_list.h"
#include "image/video_processor.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

int64_t ElementSize(const std::string& dtype) {
  DType t;
  if (!ParseDType(dtype, &t) || (t != DType::kF32 && t != DType::kI64)) {
    Fail(ErrorCode::kInvalidArgument, "golden tensors hold F32 and I64, not ", dtype);
  }
  return static_cast<int64_t>(DTypeSize(t));
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const std::vector<int64_t>& shape) { return Json(shape).dump(); }

double ValueAt(const RawTensor& t, int64_t i) {
  if (t.dtype == "I64") {
    int64_t v;
    std::memcpy(&v, t.bytes.data() + 8 * i, 8);
    return static_cast<double>(v);
  }
  float v;
  std::memcpy(&v, t.bytes.data() + 4 * i, 4);
  return v;
}

std::string Sha256(std::span<const uint8_t> bytes) {
  return hub::DigestOf(hub::DigestKind::kSha256,
                       std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::span<const uint8_t> Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

template <typename T>
void AppendBytes(const std::vector<T>& values, std::vector<uint8_t>* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(values.data());
  out->insert(out->end(), p, p + values.size() * sizeof(T));
}

// The rows of pixel_values or pixel_values_videos, as bytes.
struct Patches {
  std::vector<uint8_t> bytes;
  int64_t rows = 0;
  int64_t row_values = 0;
};

// Every image of the case in message order (meta.json lists them so), as the engine
// would preprocess them without a budget.
Patches PreprocessImages(const std::string& dir, const Json& meta, const std::string& model) {
  const ImageProcessorParams params = LoadPreprocessorConfig(model + "/preprocessor_config.json");
  Patches out;
  out.row_values = params.patch_values();
  ImageWorkspace workspace;
  int index = 0;
  for (const Json& image : meta.at("images")) {
    const std::string file = ReadFileToString(dir + "/" + image.at("file").get<std::string>());
    const PreprocessedImage p =
        PreprocessImage(Span(file), params, {}, {}, StrCat("image ", ++index), &workspace);
    AppendBytes(p.pixel_values, &out.bytes);
    out.rows += p.num_patches();
  }
  return out;
}

// Every video of the case in message order, from its frame list at its fps.
Patches PreprocessVideos(const std::string& dir, const Json& meta, const std::string& model) {
  const VideoProcessorParams params =
      LoadVideoPreprocessorConfig(model + "/video_preprocessor_config.json");
  Patches out;
  out.row_values = params.image.patch_values();
  int index = 0;
  for (const Json& video : meta.at("videos")) {
    std::vector<std::string> files;
    for (const Json& f : video.at("frames"))
      files.push_back(ReadFileToString(dir + "/" + f.get<std::string>()));
    std::vector<std::span<const uint8_t>> frames;
    for (const std::string& f : files) frames.push_back(Span(f));
    const std::string label = StrCat("video ", ++index);
    VideoFrameList list(frames, video.at("fps").get<double>(), {}, label);
    const PreprocessedVideo p = PreprocessVideo(list, params, params.sampling, {}, {}, label);
    AppendBytes(p.pixel_values, &out.bytes);
    out.rows += p.num_patches();
  }
  return out;
}

}  // namespace

RawTensor RawF32Tensor(const std::vector<float>& values, std::vector<int64_t> shape) {
  return {"F32",
          std::move(shape),
          {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)}};
}

GoldenTensors::GoldenTensors(const std::string& case_dir)
    : dir_(case_dir), name_(std::filesystem::path(case_dir).lexically_normal().filename()) {
  if (name_.empty()) name_ = std::filesystem::path(case_dir).parent_path().filename();
  const std::string path = dir_ + "/tensors.safetensors";
  file_ = ReadFileToString(path);
  uint64_t header_size = 0;
  if (file_.size() < 8) Fail(ErrorCode::kInvalidArgument, path, ": too short for safetensors");
  std::memcpy(&header_size, file_.data(), 8);
  if (header_size > file_.size() - 8) Fail(ErrorCode::kInvalidArgument, path, ": truncated");
  const Json header = Json::parse(file_.substr(8, header_size));
  const size_t data_offset = 8 + header_size;
  for (const auto& [tensor, entry] : header.items()) {
    if (tensor == "__metadata__") continue;
    RawTensor t{entry.at("dtype"), entry.at("shape").get<std::vector<int64_t>>(), {}};
    const uint64_t begin = entry.at("data_offsets")[0], end = entry.at("data_offsets")[1];
    if (begin > end || end > file_.size() - data_offset ||
        static_cast<int64_t>(end - begin) != Numel(t.shape) * ElementSize(t.dtype)) {
      Fail(ErrorCode::kInvalidArgument, path, ": tensor ", tensor, " has bad data_offsets");
    }
    t.bytes = Span(file_).subspan(data_offset + begin, end - begin);
    stored_.emplace(tensor, std::move(t));
  }
  const std::string digests = dir_ + "/derived_digests.json";
  if (!std::filesystem::exists(digests)) return;
  const Json listed = Json::parse(ReadFileToString(digests));
  for (const Json& d : listed.at("tensors")) {
    const std::string tensor = d.at("name");
    if (stored_.count(tensor) != 0) {
      Fail(ErrorCode::kInvalidArgument, "golden case ", name_, ": ", tensor,
           " is both in tensors.safetensors and in derived_digests.json");
    }
    digests_[tensor] = {d.at("dtype"), d.at("shape").get<std::vector<int64_t>>(), d.at("sha256")};
  }
}

GoldenTensors::~GoldenTensors() = default;

std::vector<std::string> GoldenTensors::TensorNames() const {
  std::vector<std::string> names;
  for (const auto& [tensor, t] : stored_) names.push_back(tensor);
  for (const auto& [tensor, d] : digests_) names.push_back(tensor);
  std::sort(names.begin(), names.end());
  return names;
}

bool GoldenTensors::Has(const std::string& tensor) const {
  return stored_.count(tensor) != 0 || digests_.count(tensor) != 0;
}

bool GoldenTensors::Stored(const std::string& tensor) const { return stored_.count(tensor) != 0; }

std::vector<int64_t> GoldenTensors::Shape(const std::string& tensor) const {
  if (const auto d = digests_.find(tensor); d != digests_.end()) return d->second.shape;
  return Tensor(tensor).shape;
}

RawTensor GoldenTensors::Tensor(const std::string& tensor) const {
  if (const auto s = stored_.find(tensor); s != stored_.end()) return s->second;
  if (digests_.count(tensor) != 0) return Derived(tensor);
  Fail(ErrorCode::kNotFound, "golden case ", name_, ": no tensor ", tensor);
}

std::vector<float> GoldenTensors::F32(const std::string& tensor) const {
  const RawTensor t = Tensor(tensor);
  if (t.dtype != "F32") Fail(ErrorCode::kInvalidArgument, name_, ": ", tensor, " is ", t.dtype);
  std::vector<float> v(t.bytes.size() / sizeof(float));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::vector<int64_t> GoldenTensors::I64(const std::string& tensor) const {
  const RawTensor t = Tensor(tensor);
  if (t.dtype != "I64") Fail(ErrorCode::kInvalidArgument, name_, ": ", tensor, " is ", t.dtype);
  std::vector<int64_t> v(t.bytes.size() / sizeof(int64_t));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::string GoldenTensors::Mismatch(const std::string& tensor, const RawTensor& got,
                                    double tolerance) const {
  if (!Has(tensor)) return StrCat("golden case ", name_, ": no tensor ", tensor);
  if (!Stored(tensor)) return DigestMismatch(tensor, got);
  const RawTensor want = Tensor(tensor);
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return StrCat("golden case ", name_, ": ", tensor, " is ", got.dtype, " ", ShapeText(got.shape),
                  ", the reference's ", want.dtype, " ", ShapeText(want.shape));
  }
  double worst = 0;
  int64_t worst_at = 0;
  for (int64_t i = 0; i < Numel(want.shape); ++i) {
    const double diff = std::fabs(ValueAt(got, i) - ValueAt(want, i));
    if (!(diff <= worst)) worst = diff, worst_at = i;  // a NaN sticks
  }
  if (worst <= tolerance) return "";
  return StrCat("golden case ", name_, ": ", tensor, " differs from the reference by ", worst,
                " (over ", tolerance, ") at value ", worst_at, ": ", ValueAt(got, worst_at), " vs ",
                ValueAt(want, worst_at));
}

std::string GoldenTensors::DigestMismatch(const std::string& tensor, const RawTensor& got) const {
  const Digest& want = digests_.at(tensor);
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return StrCat("golden case ", name_, ": ", tensor, " is ", got.dtype, " ", ShapeText(got.shape),
                  ", the reference's (derived_digests.json) ", want.dtype, " ",
                  ShapeText(want.shape));
  }
  const std::string sha = Sha256(got.bytes);
  if (sha == want.sha256) return "";
  return StrCat("golden case ", name_, ": ", tensor, " is not the reference's bit for bit: sha256 ",
                sha, ", derived_digests.json has ", want.sha256);
}

const RawTensor& GoldenTensors::Derived(const std::string& tensor) const {
  if (const auto d = derived_.find(tensor); d != derived_.end()) return d->second;
  Patches patches;
  try {
    const Json meta = Json::parse(ReadFileToString(dir_ + "/meta.json"));
    const std::string model = dir_ + "/../../model";
    if (tensor == "pixel_values") {
      patches = PreprocessImages(dir_, meta, model);
    } else if (tensor == "pixel_values_videos") {
      patches = PreprocessVideos(dir_, meta, model);
    } else {
      Fail(ErrorCode::kInvalidArgument, "qvl does not know how to derive it");
    }
  } catch (const std::exception& e) {
    Fail(ErrorCode::kInternal, "golden case ", name_, ": ", tensor,
         " (digested): qvl's preprocessing of the case's inputs failed: ", e.what());
  }
  const RawTensor t{"F32", {patches.rows, patches.row_values}, patches.bytes};
  if (const std::string m = DigestMismatch(tensor, t); !m.empty()) {
    Fail(ErrorCode::kInternal, m, " (qvl's preprocessing of the case's inputs)");
  }
  derived_bytes_[tensor] = std::move(patches.bytes);
  return derived_[tensor] = {t.dtype, t.shape, derived_bytes_[tensor]};
}

}  // namespace qvl
