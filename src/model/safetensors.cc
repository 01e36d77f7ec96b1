// Reading follows the reference implementation (the Rust `safetensors` crate): a header
// of at most 100 MB that starts with '{', and tensors that tile the data section exactly,
// without holes or overlaps, in offset order.
#include "model/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/bf16.h"
#include "base/error.h"
#include "base/json_fields.h"

namespace qvl {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kMaxRank = 16;

// A non-negative JSON integer, or fail with "PATH: tensor NAME: WHAT must be ...".
uint64_t NonNegative(const json& value, const std::string& path, const std::string& name,
                     const char* what) {
  if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0)) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": ", what,
         " must hold non-negative integers, got ", value.dump());
  }
  return value.get<uint64_t>();
}

// A tensor with its offset inside the data section, before it is placed in memory.
struct Entry {
  TensorInfo info;
  uint64_t begin = 0;
};

Entry ParseTensorEntry(const std::string& name, const json& entry, const std::string& path,
                       uint64_t data_size) {
  if (!entry.is_object()) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": entry must be an object, got ",
         JsonTypeName(entry));
  }
  const auto field = [&](const char* key) -> const json& {
    const auto it = entry.find(key);
    if (it == entry.end())
      Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": ", key, " is missing");
    return *it;
  };
  Entry e;
  TensorInfo& t = e.info;
  t.name = name;
  const json& dtype = field("dtype");
  if (!dtype.is_string()) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": dtype must be a string, got ",
         JsonTypeName(dtype));
  }
  if (!ParseDType(dtype.get<std::string>(), &t.dtype)) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, " has unsupported dtype ", dtype.dump(),
         " (qvl reads ", KnownDTypeNames(), ")");
  }
  const json& shape = field("shape");
  if (!shape.is_array() || shape.size() > kMaxRank) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": shape must be a list of at most ",
         kMaxRank, " integers, got ", shape.is_array() ? "a longer list" : JsonTypeName(shape));
  }
  // Every partial product must fit an int64_t, even when a later dimension is 0, so that
  // TensorInfo::numel() cannot overflow.
  uint64_t bytes = DTypeSize(t.dtype);
  for (const json& dim : shape) {
    const uint64_t d = NonNegative(dim, path, name, "shape");
    if (d > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(bytes, d, &bytes) ||
        bytes > static_cast<uint64_t>(INT64_MAX)) {
      Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": shape ", shape.dump(),
           " overflows a 64-bit byte count");
    }
    t.shape.push_back(static_cast<int64_t>(d));
  }
  const json& offsets = field("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name,
         ": data_offsets must be a list of two integers [begin, end], got ", offsets.dump());
  }
  const uint64_t begin = NonNegative(offsets[0], path, name, "data_offsets");
  const uint64_t end = NonNegative(offsets[1], path, name, "data_offsets");
  if (end < begin) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": data_offsets [", begin, ", ", end,
         "] end before they begin");
  }
  if (end > data_size) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": data_offsets [", begin, ", ", end,
         "] point past the end of the file (the data section has ", data_size,
         " bytes; truncated?)");
  }
  if (end - begin != bytes) {
    Fail(ErrorCode::kCorrupt, path, ": tensor ", name, ": dtype ", DTypeName(t.dtype), " x shape ",
         FormatShape(t.shape), " is ", bytes, " bytes but data_offsets [", begin, ", ", end,
         "] span ", end - begin);
  }
  t.nbytes = static_cast<size_t>(bytes);
  e.begin = begin;
  return e;
}

void ParseMetadata(const json& value, const std::string& path,
                   std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) {
    Fail(ErrorCode::kCorrupt, path, ": __metadata__ must be an object, got ", JsonTypeName(value));
  }
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      Fail(ErrorCode::kCorrupt, path, ": __metadata__ must map strings to strings, but \"", key,
           "\" holds ", JsonTypeName(v));
    }
    if (metadata != nullptr) (*metadata)[key] = v.get<std::string>();
  }
}

}  // namespace

std::string FormatShape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += StrCat(i ? ", " : "", shape[i]);
  return s + "]";
}

std::vector<int64_t> IntValues(const TensorInfo& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t.dtype == DType::kI64) {
      std::memcpy(&out[i], t.data + 8 * i, 8);
    } else {
      int32_t v;
      std::memcpy(&v, t.data + 4 * i, 4);
      out[i] = v;
    }
  }
  return out;
}

std::vector<float> FloatValues(const TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h;
    switch (t.dtype) {
      case DType::kF32:
        std::memcpy(&out[i], t.data + 4 * i, 4);
        break;
      case DType::kBF16:
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = Bf16ToF32(h);
        break;
      default:  // kF16: callers check the dtype
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = F16ToF32(h);
        break;
    }
  }
  return out;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorInfo::ShapeString() const { return FormatShape(shape); }

std::vector<TensorInfo> ParseSafetensors(const uint8_t* data, size_t size, const std::string* path,
                                         std::map<std::string, std::string>* metadata) {
  static const std::string kUnnamed = "safetensors data";
  const std::string& where = path != nullptr ? *path : kUnnamed;
  if (size < 8) {
    Fail(ErrorCode::kCorrupt, where, ": file is ", size,
         " bytes, too short for a safetensors header (truncated?)");
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | data[i];
  if (header_size > kMaxHeaderBytes) {
    Fail(ErrorCode::kCorrupt, where, ": header length ", header_size,
         " exceeds the 100 MB limit (not a safetensors file?)");
  }
  if (header_size > size - 8) {
    Fail(ErrorCode::kCorrupt, where, ": header length ", header_size, " is larger than the file (",
         size, " bytes; truncated?)");
  }
  if (header_size < 2 || data[8] != '{') {
    Fail(ErrorCode::kCorrupt, where, ": header is not a JSON object (not a safetensors file?)");
  }
  const std::string_view text(reinterpret_cast<const char*>(data + 8), header_size);
  const json header = ParseJsonText(text, StrCat(where, ": header"));
  if (!header.is_object()) {
    Fail(ErrorCode::kCorrupt, where, ": header must be a JSON object, got ", JsonTypeName(header));
  }
  const uint8_t* base = data + 8 + header_size;
  const uint64_t data_size = size - 8 - header_size;

  std::vector<Entry> entries;
  entries.reserve(header.size());
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      ParseMetadata(entry, where, metadata);
      continue;
    }
    entries.push_back(ParseTensorEntry(name, entry, where, data_size));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.info.nbytes < b.info.nbytes;
  });

  std::vector<TensorInfo> tensors;
  tensors.reserve(entries.size());
  uint64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    if (e.begin < covered) {
      Fail(ErrorCode::kCorrupt, where, ": tensors ", tensors.back().name, " and ", e.info.name,
           " overlap (data_offsets [", entries[i - 1].begin, ", ", covered, "] and [", e.begin,
           ", ", e.begin + e.info.nbytes, "])");
    }
    if (e.begin > covered) {
      Fail(ErrorCode::kCorrupt, where, ": bytes [", covered, ", ", e.begin,
           ") of the data section belong to no tensor (hole before ", e.info.name, ")");
    }
    covered = e.begin + e.info.nbytes;
    e.info.data = base + e.begin;
    e.info.file = path;
    // Kernels load whole elements; the Rust writer pads the header so this always holds.
    if (reinterpret_cast<uintptr_t>(e.info.data) % DTypeSize(e.info.dtype) != 0) {
      Fail(ErrorCode::kCorrupt, where, ": tensor ", e.info.name, ": data at file offset ",
           8 + header_size + e.begin, " is not aligned to its ", DTypeSize(e.info.dtype),
           "-byte elements");
    }
    tensors.push_back(std::move(e.info));
  }
  if (covered != data_size) {
    Fail(ErrorCode::kCorrupt, where, ": the data section has ", data_size - covered,
         " bytes after the last tensor (", data_size, " bytes, tensors cover ", covered,
         "; trailing garbage?)");
  }
  return tensors;
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : path_(std::make_unique<std::string>(path)), file_(path) {
  tensors_ = ParseSafetensors(file_.data(), file_.size(), path_.get(), &metadata_);
  by_name_.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) by_name_.emplace(tensors_[i].name, i);
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace qvl
