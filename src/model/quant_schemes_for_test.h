// Tests only: the kinds of pre-quantized checkpoint quantized_folder_for_test.h writes
// (TestQuantScheme), and the packing, levels and bitsandbytes encoding it writes them
// with, each its own formula rather than the loader's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "model/quantization_config.h"
#include "model/safetensors.h"
#include "ops/weight_view.h"

namespace qvl {

struct TestQuantScheme {
  WeightQuantization quant;
  DType scale_dtype = DType::kF32;
  std::string format;          // compressed-tensors' format
  std::string strategy;        // compressed-tensors' strategy
  bool column_order = false;   // groups of permuted columns (act-order, actorder "group")
  bool gptq_symmetric = true;  // GPTQ's zero points all in the middle
  bool gptq_v1 = true;         // GPTQ's "gptq" format: zero points stored minus 1
  int bnb_blocksize = 64;      // bitsandbytes' 4-bit: values per absmax
  bool bnb_nested = false;     // bitsandbytes' 4-bit: absmax double-quantized

  static TestQuantScheme QwenFp8(int rows, int cols) {
    TestQuantScheme s;
    s.quant = {.method = WeightQuantization::Method::kFp8, .block_rows = rows, .block_cols = cols};
    return s;
  }
  static TestQuantScheme Awq(int group) {
    TestQuantScheme s;
    s.quant = {WeightQuantization::Method::kAwq, DType::kI32, 4, false, 1, group};
    s.scale_dtype = DType::kF16;
    return s;
  }
  // bitsandbytes' 4-bit, rounding the weights to `dtype` as dequantize_4bit does.
  static TestQuantScheme BitsAndBytes4(FourBitType type, int blocksize, bool nested, DType dtype) {
    TestQuantScheme s;
    s.quant = {.method = WeightQuantization::Method::kBitsAndBytes,
               .codes = DType::kU8,
               .bits = 4,
               .four_bit = type};
    s.scale_dtype = dtype;
    s.bnb_blocksize = blocksize;
    s.bnb_nested = nested;
    return s;
  }
  static TestQuantScheme BitsAndBytes8() {
    TestQuantScheme s;
    s.quant = {
        .method = WeightQuantization::Method::kBitsAndBytes, .codes = DType::kI8, .block_rows = 1};
    return s;
  }
  // GPTQ, `bits` in groups of `group` columns (-1: whole rows), F16 scales; with
  // `desc_act` the groups are of permuted columns.
  static TestQuantScheme Gptq(int bits, int group, bool desc_act, bool v1, bool symmetric) {
    TestQuantScheme s;
    s.quant = {.method = WeightQuantization::Method::kGptq,
               .codes = DType::kI32,
               .bits = bits,
               .symmetric = false,
               .block_rows = 1,
               .block_cols = group < 0 ? 0 : group,
               .column_groups = true,
               .zeros_minus_one = v1};
    s.scale_dtype = DType::kF16;
    s.column_order = desc_act;
    s.gptq_symmetric = symmetric;
    s.gptq_v1 = v1;
    return s;
  }
  // `codes`: F8_E4M3, I8 or I32 (packed `bits`); `block` as WeightQuantization's.
  static TestQuantScheme Compressed(DType codes, int bits, bool symmetric, int block_rows,
                                    int block_cols, DType scale_dtype) {
    TestQuantScheme s;
    s.quant = {WeightQuantization::Method::kCompressedTensors,
               codes,
               bits,
               symmetric,
               block_rows,
               block_cols};
    s.scale_dtype = scale_dtype;
    s.format = codes == DType::kF8E4M3 ? "float-quantized"
               : codes == DType::kI8   ? "int-quantized"
                                       : "pack-quantized";
    s.strategy = block_rows == 0   ? "tensor"
                 : block_rows > 1  ? "block"
                 : block_cols == 0 ? "channel"
                                   : "group";
    return s;
  }
};

namespace quantized_for_test {

// e4m3 by its definition: (-1)^s 2^(e-7) (1 + m/8), subnormals 2^-6 m/8.
inline double Fp8Value(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return code & 0x80 ? -mag : mag;
}

inline float InDType(DType t, float v) {
  if (t == DType::kF16) return F16ToF32(F32ToF16(v));
  return t == DType::kBF16 ? Bf16ToF32(F32ToBf16(v)) : v;
}

inline std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return {b, b + n};
}

inline std::vector<uint8_t> ScaleBytes(const std::vector<float>& s, DType t) {
  if (t == DType::kF32) return Bytes(s.data(), 4 * s.size());
  std::vector<uint16_t> h(s.size());
  for (size_t i = 0; i < s.size(); ++i) h[i] = t == DType::kF16 ? F32ToF16(s[i]) : F32ToBf16(s[i]);
  return Bytes(h.data(), 2 * h.size());
}

// Packs `values` ([n, m] row-major, each + 2^(bits-1)) into I32 words along dimension `dim`.
inline std::vector<uint8_t> Pack(const std::vector<int>& values, int64_t n, int64_t m, int bits,
                                 int dim, std::vector<int64_t>* shape) {
  const int64_t per = 32 / bits;
  const int64_t pn = dim == 0 ? (n + per - 1) / per : n, pm = dim == 1 ? (m + per - 1) / per : m;
  std::vector<uint32_t> words(static_cast<size_t>(pn * pm), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < m; ++c) {
      const uint32_t u = static_cast<uint32_t>(values[r * m + c] + (1 << (bits - 1)));
      const int64_t i = dim == 0 ? r : c;
      const int64_t w = dim == 0 ? (i / per) * pm + c : r * pm + i / per;
      words[static_cast<size_t>(w)] |= u << (bits * (i % per));
    }
  }
  *shape = {pn, pm};
  return Bytes(words.data(), 4 * words.size());
}

// AutoAWQ's packing of `values` ([n, m] row-major, each + 8): words [m, ceil(n / 8)],
// value (r, c) in word (c, r / 8), output j of the 8 at bit 16 * (j & 1) + 4 * (j >> 1)
// (its "gemm" interleave, written here as a formula rather than the loader's table).
inline std::vector<uint8_t> PackAwq(const std::vector<int>& values, int64_t n, int64_t m,
                                    std::vector<int64_t>* shape) {
  const int64_t words = (n + 7) / 8;
  std::vector<uint32_t> packed(static_cast<size_t>(m * words), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < m; ++c) {
      packed[static_cast<size_t>(c * words + r / 8)] |= static_cast<uint32_t>(values[r * m + c] + 8)
                                                        << (16 * (r % 2) + 4 * (r % 8 / 2));
    }
  }
  *shape = {m, words};
  return Bytes(packed.data(), 4 * packed.size());
}

// bitsandbytes' 4-bit levels: NormalFloat's are a table (ops' FourBitLevels, its one
// copy of bitsandbytes' list); fp4's are derived here from the codes s|e|m rather than
// listed: magnitude 0.0625 m for e = 0, else 2^(4 - e) (1 + m / 2), over 12.
inline float Bnb4Level(FourBitType type, int code) {
  if (type == FourBitType::kNf4) return FourBitLevels(type)[code];
  const int e = (code >> 1) & 3, m = code & 1;
  const float magnitude = e == 0 ? 0.0625f * static_cast<float>(m)
                                 : std::ldexp(1.0f + 0.5f * static_cast<float>(m), 4 - e);
  return (code & 8 ? -magnitude : magnitude) / 12.0f;
}

// The level of `type` nearest `x` (in [-1, 1]).
inline int NearestBnb4Code(FourBitType type, float x) {
  int best = 0;
  for (int code = 1; code < 16; ++code) {
    if (std::fabs(Bnb4Level(type, code) - x) < std::fabs(Bnb4Level(type, best) - x)) best = code;
  }
  return best;
}

// A weight's `values` ([rows, cols]) as bitsandbytes stores them under `scheme`, appended
// to `out`, or (`dequantized`) the F32 values its dequantization gives.
inline void AppendBitsAndBytes(const std::string& name, const std::vector<float>& values,
                               int64_t rows, int64_t cols, const TestQuantScheme& scheme,
                               bool dequantized, std::vector<TensorData>* out) {
  const int64_t n = rows * cols;
  std::vector<float> decoded(static_cast<size_t>(n));
  const auto push = [&](std::string tensor, DType dtype, std::vector<int64_t> shape,
                        std::vector<uint8_t> bytes) {
    if (!dequantized)
      out->push_back({{std::move(tensor), dtype, std::move(shape)}, std::move(bytes)});
  };
  if (scheme.quant.codes == DType::kI8) {  // LLM.int8: a row's absmax, codes x SCB / 127
    std::vector<int8_t> codes(static_cast<size_t>(n));
    std::vector<float> scb(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      float amax = 0;
      for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(values[r * cols + c]));
      scb[r] = amax > 0 ? amax : 1.0f;
      const float scale = scb[r] * static_cast<float>(1.0 / 127.0);
      for (int64_t c = 0; c < cols; ++c) {
        const int8_t q =
            static_cast<int8_t>(std::nearbyint(values[r * cols + c] * 127.0f / scb[r]));
        codes[r * cols + c] = q;
        decoded[r * cols + c] = static_cast<float>(q) * scale;
      }
    }
    const std::string prefix = name.substr(0, name.size() - std::string(".weight").size());
    push(name, DType::kI8, {rows, cols}, Bytes(codes.data(), codes.size()));
    push(prefix + ".SCB", DType::kF32, {rows}, Bytes(scb.data(), 4 * scb.size()));
    push(name + "_format", DType::kU8, {}, {0});
  } else {
    const FourBitType type = scheme.quant.four_bit;
    const int64_t bs = scheme.bnb_blocksize, blocks = (n + bs - 1) / bs;
    std::vector<float> absmax(static_cast<size_t>(blocks), 0.0f);
    for (int64_t k = 0; k < n; ++k) absmax[k / bs] = std::max(absmax[k / bs], std::fabs(values[k]));
    std::vector<uint8_t> packed(static_cast<size_t>((n + 1) / 2), 0);
    for (int64_t k = 0; k < n; ++k) {
      const float a = absmax[k / bs] > 0 ? absmax[k / bs] : 1.0f;
      packed[k / 2] |=
          static_cast<uint8_t>(NearestBnb4Code(type, values[k] / a) << (k % 2 ? 0 : 4));
    }
    std::vector<float> used = absmax;  // what dequantization multiplies by
    nlohmann::json state = {{"quant_type", type == FourBitType::kNf4 ? "nf4" : "fp4"},
                            {"blocksize", bs},
                            {"dtype", scheme.scale_dtype == DType::kF16   ? "float16"
                                      : scheme.scale_dtype == DType::kF32 ? "float32"
                                                                          : "bfloat16"},
                            {"shape", {rows, cols}}};
    std::vector<float> levels(16);
    for (int code = 0; code < 16; ++code) levels[code] = Bnb4Level(type, code);
    push(name + ".quant_map", DType::kF32, {16}, Bytes(levels.data(), 64));
    if (scheme.bnb_nested) {  // absmax - mean as 8-bit codes of an even map, per 256
      constexpr int64_t kNested = 256;
      float mean = 0;
      for (float a : absmax) mean += a / static_cast<float>(blocks);
      std::vector<float> map(256), nested(static_cast<size_t>((blocks + kNested - 1) / kNested), 0);
      for (int i = 0; i < 256; ++i) map[i] = -1.0f + 2.0f * static_cast<float>(i) / 255.0f;
      for (int64_t i = 0; i < blocks; ++i) {
        nested[i / kNested] = std::max(nested[i / kNested], std::fabs(absmax[i] - mean));
      }
      std::vector<uint8_t> codes(static_cast<size_t>(blocks));
      for (int64_t i = 0; i < blocks; ++i) {
        const float scale = nested[i / kNested] > 0 ? nested[i / kNested] : 1.0f;
        codes[i] = static_cast<uint8_t>(
            std::clamp(std::nearbyint(((absmax[i] - mean) / scale + 1.0f) * 127.5f), 0.0f, 255.0f));
        const float product = map[codes[i]] * nested[i / kNested];
        used[i] = product + mean;
      }
      state["nested_blocksize"] = kNested;
      state["nested_dtype"] = "float32";
      state["nested_offset"] = mean;
      push(name + ".absmax", DType::kU8, {blocks}, codes);
      push(name + ".nested_absmax", DType::kF32, {static_cast<int64_t>(nested.size())},
           Bytes(nested.data(), 4 * nested.size()));
      push(name + ".nested_quant_map", DType::kF32, {256}, Bytes(map.data(), 4 * map.size()));
    } else {
      push(name + ".absmax", DType::kF32, {blocks}, Bytes(absmax.data(), 4 * absmax.size()));
    }
    const std::string json = state.dump();
    push(name + ".quant_state.bitsandbytes__" + state["quant_type"].get<std::string>(), DType::kU8,
         {static_cast<int64_t>(json.size())}, Bytes(json.data(), json.size()));
    push(name, DType::kU8, {(n + 1) / 2, 1}, packed);
    for (int64_t k = 0; k < n; ++k) {
      const int code = k % 2 ? packed[k / 2] & 15 : packed[k / 2] >> 4;
      decoded[k] = InDType(scheme.scale_dtype, Bnb4Level(type, code) * used[k / bs]);
    }
  }
  if (dequantized) {
    out->push_back({{name, DType::kF32, {rows, cols}}, Bytes(decoded.data(), 4 * decoded.size())});
  }
}

}  // namespace quantized_for_test

}  // namespace qvl
