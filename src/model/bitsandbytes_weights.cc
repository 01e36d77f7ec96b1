#include "model/bitsandbytes_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"

namespace qvl {
namespace {

std::string Beside(std::string_view weight_name, std::string_view key) {
  return StrCat(weight_name, ".", key);
}

std::string StateName(std::string_view weight_name, const WeightQuantization& q) {
  return Beside(weight_name, StrCat("quant_state.bitsandbytes__", q.CodesName()));
}

[[noreturn]] void FailTensor(const TensorInfo& t, std::string_view problem) {
  Fail(ErrorCode::kCorrupt, *t.file, ": tensor ", t.name, " ", problem);
}

void Expect(const TensorInfo& t, DType dtype, const std::vector<int64_t>& shape,
            std::string_view what) {
  if (t.dtype != dtype || t.shape != shape) {
    FailTensor(t, StrCat("is ", DTypeName(t.dtype), " ", t.ShapeString(), "; ", what, " should be ",
                         DTypeName(dtype), " ", FormatShape(shape)));
  }
}

// bitsandbytes' block sizes: powers of two from 32 (4-bit codes) or 64 (nested absmax)
// to 4096.
int64_t BlockSize(const JsonFieldReader& r, std::string_view key, int64_t smallest) {
  const int64_t size = r.Int(key, smallest, 4096);
  if ((size & (size - 1)) != 0) {
    r.FailField(key, StrCat("is ", size, "; bitsandbytes' block sizes are powers of two"));
  }
  return size;
}

DType WeightDType(const JsonFieldReader& r) {
  const std::string name = r.String("dtype");
  if (name == "bfloat16") return DType::kBF16;
  if (name == "float16") return DType::kF16;
  if (name == "float32") return DType::kF32;
  r.FailField("dtype", StrCat("is \"", name,
                              "\"; 4-bit weights dequantize to \"bfloat16\", "
                              "\"float16\" or \"float32\""));
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Bnb4BitState ReadBnb4BitState(const TensorStore& store, const WeightQuantization& q,
                              std::string_view weight_name) {
  const TensorInfo& t = store.Require(StateName(weight_name, q));
  if (t.dtype != DType::kU8 || t.shape.size() != 1) {
    FailTensor(t, StrCat("is ", DTypeName(t.dtype), " ", t.ShapeString(),
                         "; a quant_state should be its JSON's U8 bytes, [length]"));
  }
  const std::string source = StrCat(*t.file, ": tensor ", t.name);
  const nlohmann::json json =
      ParseJsonText(std::string_view(reinterpret_cast<const char*>(t.data), t.nbytes), source);
  const JsonFieldReader r(json, source, "");
  const std::string type = r.String("quant_type");
  if (type != q.CodesName()) {
    r.FailField("quant_type", StrCat("is \"", type,
                                     "\", but config.json's quantization_config "
                                     "says \"",
                                     q.CodesName(), "\""));
  }
  Bnb4BitState s;
  s.shape = r.IntList("shape", 0, int64_t{1} << 40);
  s.blocksize = BlockSize(r, "blocksize", 32);
  s.dtype = WeightDType(r);
  s.nested = store.Find(Beside(weight_name, "nested_absmax")) != nullptr;
  if (s.nested) {
    s.nested_blocksize = BlockSize(r, "nested_blocksize", 64);
    if (const std::string d = r.String("nested_dtype"); d != "float32") {
      r.FailField("nested_dtype",
                  StrCat("is \"", d, "\"; qvl reads absmax double-quantized to \"float32\""));
    }
    const double offset = r.Number("nested_offset");
    s.nested_offset = static_cast<float>(offset);
    if (!std::isfinite(s.nested_offset)) {
      r.FailField("nested_offset", StrCat("is ", offset, "; it must be a finite float32"));
    }
  }
  return s;
}

Bnb4BitState CheckBnb4BitWeight(const TensorStore& store, const WeightQuantization& q,
                                std::string_view weight_name, const std::vector<int64_t>& shape,
                                const TensorInfo& codes, std::vector<std::string>* known) {
  const Bnb4BitState s = ReadBnb4BitState(store, q, weight_name);
  const TensorInfo& state = store.Require(StateName(weight_name, q));
  if (s.shape != shape) {
    FailTensor(state, StrCat("gives the shape of ", weight_name, " as ", FormatShape(s.shape),
                             "; the model's config.json makes it ", FormatShape(shape)));
  }
  const int64_t n = shape[0] * shape[1];
  Expect(codes, DType::kU8, {CeilDiv(n, 2), 1}, "its 4-bit codes, two a byte,");
  const int64_t blocks = CeilDiv(n, s.blocksize);
  const TensorInfo& absmax = store.Require(Beside(weight_name, "absmax"));
  Expect(absmax, s.nested ? DType::kU8 : DType::kF32, {blocks},
         StrCat("one absmax per ", s.blocksize, " values",
                s.nested ? ", as 8-bit codes (double quantization)," : ""));
  const TensorInfo& quant_map = store.Require(Beside(weight_name, "quant_map"));
  Expect(quant_map, DType::kF32, {16}, "the 4-bit levels");
  known->insert(known->end(), {state.name, absmax.name, quant_map.name});
  if (s.nested) {
    const TensorInfo& nested = store.Require(Beside(weight_name, "nested_absmax"));
    Expect(nested, DType::kF32, {CeilDiv(blocks, s.nested_blocksize)},
           StrCat("one scale per ", s.nested_blocksize, " absmax codes"));
    const TensorInfo& nested_map = store.Require(Beside(weight_name, "nested_quant_map"));
    Expect(nested_map, DType::kF32, {256}, "the absmax codes' levels");
    known->insert(known->end(), {nested.name, nested_map.name});
  }
  return s;
}

std::vector<float> Bnb4BitAbsmax(const TensorStore& store, std::string_view weight_name,
                                 const Bnb4BitState& state) {
  const TensorInfo& a = store.Require(Beside(weight_name, "absmax"));
  std::vector<float> out(static_cast<size_t>(a.numel()));
  if (!state.nested) {
    std::memcpy(out.data(), a.data, 4 * out.size());
    return out;
  }
  const TensorInfo& nested = store.Require(Beside(weight_name, "nested_absmax"));
  float levels[256];
  std::memcpy(levels, store.Require(Beside(weight_name, "nested_quant_map")).data, sizeof levels);
  // A block of nested_blocksize absmax codes at a time: the 2B's 33 million of them are
  // decoded on every start, the packed-weight cache's too.
  const size_t per_scale = static_cast<size_t>(state.nested_blocksize);
  for (size_t first = 0, j = 0; first < out.size(); first += per_scale, ++j) {
    float scale;
    std::memcpy(&scale, nested.data + 4 * j, 4);
    const size_t last = std::min(out.size(), first + per_scale);
    for (size_t i = first; i < last; ++i) {
      const float value = levels[a.data[i]] * scale;  // rounded to f32 before the offset
      out[i] = value + state.nested_offset;
    }
  }
  return out;
}

std::string BnbScalesName(std::string_view weight_name, const WeightQuantization& q) {
  if (q.codes == DType::kU8) return Beside(weight_name, "absmax");
  return StrCat(weight_name.substr(0, weight_name.size() - std::string_view(".weight").size()),
                ".SCB");
}

void CheckBnb8BitFormat(const TensorStore& store, std::string_view weight_name,
                        std::vector<std::string>* known) {
  const std::string name = StrCat(weight_name, "_format");
  const TensorInfo* t = store.Find(name);
  if (t == nullptr) return;
  if (t->dtype != DType::kU8 || t->numel() != 1) {
    FailTensor(*t, StrCat("is ", DTypeName(t->dtype), " ", t->ShapeString(),
                          "; an 8-bit weight's format should be one U8 value"));
  }
  if (t->data[0] != 0) {
    FailTensor(*t, StrCat("says layout ", int{t->data[0]},
                          "; qvl reads 8-bit weights stored row-major (0, \"row\")"));
  }
  known->push_back(name);
}

float Bnb8BitScale(float scb) { return scb * static_cast<float>(1.0 / 127.0); }

}  // namespace qvl
