// Tests only: a model folder rewritten the way Qwen's -FP8 releases are made
// (transformers' Fp8Quantize): every Linear layer's weight as F8_E4M3 codes with one
// scale per block in PREFIX.weight_scale_inv, and config.json's quantization_config
// naming the block size. With `dequantized`, the same weights are written back as the
// F32 products code x scale instead: what an fp8 folder must decode to, reached here
// with this file's own arithmetic rather than the loader's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "base/mapped_file.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "ops/weight_view.h"

namespace qvl {
namespace fp8_for_test {

// e4m3 by its definition: (-1)^s 2^(e-7) (1 + m/8), subnormals 2^-6 m/8; 0x7f is NaN.
// The decoded checkpoint is computed with this, not with the loader's decoder.
inline double Value(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return code & 0x80 ? -mag : mag;
}

}  // namespace fp8_for_test

inline void WriteFp8Folder(const std::string& src, const std::string& dst, Fp8Blocks blocks,
                           bool dequantized) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  fs::create_directories(dst);
  for (const fs::directory_entry& e : fs::directory_iterator(src)) {
    const std::string name = e.path().filename();
    if (name != "model.safetensors" && name != "config.json") {
      fs::copy_file(e.path(), fs::path(dst) / name, fs::copy_options::overwrite_existing);
    }
  }
  json config = json::parse(ReadFileToString(src + "/config.json"));
  if (!dequantized) {
    config["quantization_config"] = {{"activation_scheme", "dynamic"},
                                     {"fmt", "e4m3"},
                                     {"quant_method", "fp8"},
                                     {"weight_block_size", {blocks.rows, blocks.cols}}};
  }
  std::ofstream(dst + "/config.json") << config.dump(2);

  const ModelConfig parsed = ParseModelConfig(config.dump(), "config.json");
  std::vector<std::string> linear;
  for (const ExpectedTensor& e : ExpectedQwen3VLTensors(parsed)) {
    if (IsLinearWeight(e)) linear.push_back(e.name);
  }
  const TensorStore store = TensorStore::OpenFolder(src);
  std::vector<TensorData> out;
  for (const TensorInfo* t : store.All()) {
    if (std::find(linear.begin(), linear.end(), t->name) == linear.end()) {
      out.push_back({{t->name, t->dtype, t->shape}, {t->data, t->data + t->nbytes}});
      continue;
    }
    const int64_t rows = t->shape[0], cols = t->shape[1];
    std::vector<float> values(static_cast<size_t>(rows * cols));
    const WeightView view{t->dtype, rows, cols, t->data};
    for (int64_t r = 0; r < rows; ++r) DecodeWeightRow(view, r, cols, &values[r * cols]);
    const int64_t brows = (rows + blocks.rows - 1) / blocks.rows;
    const int64_t bcols = (cols + blocks.cols - 1) / blocks.cols;
    std::vector<uint8_t> codes(static_cast<size_t>(rows * cols));
    std::vector<float> scales(static_cast<size_t>(brows * bcols));
    for (int64_t br = 0; br < brows; ++br) {
      for (int64_t bc = 0; bc < bcols; ++bc) {
        const int64_t r1 = std::min(rows, (br + 1) * blocks.rows);
        const int64_t c1 = std::min(cols, (bc + 1) * blocks.cols);
        float amax = 0;
        for (int64_t r = br * blocks.rows; r < r1; ++r) {
          for (int64_t c = bc * blocks.cols; c < c1; ++c) {
            amax = std::max(amax, std::fabs(values[r * cols + c]));
          }
        }
        const float to_fp8 = amax > 0 ? 448.0f / amax : 1.0f;
        scales[static_cast<size_t>(br * bcols + bc)] = 1.0f / to_fp8;
        for (int64_t r = br * blocks.rows; r < r1; ++r) {
          for (int64_t c = bc * blocks.cols; c < c1; ++c) {
            codes[static_cast<size_t>(r * cols + c)] = F32ToF8E4M3(values[r * cols + c] * to_fp8);
          }
        }
      }
    }
    if (dequantized) {
      std::vector<uint8_t> bytes(codes.size() * 4);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const float scale =
              scales[static_cast<size_t>((r / blocks.rows) * bcols + c / blocks.cols)];
          const float v =
              static_cast<float>(fp8_for_test::Value(codes[static_cast<size_t>(r * cols + c)])) *
              scale;
          std::memcpy(bytes.data() + 4 * (r * cols + c), &v, 4);
        }
      }
      out.push_back({{t->name, DType::kF32, t->shape}, std::move(bytes)});
      continue;
    }
    out.push_back({{t->name, DType::kF8E4M3, t->shape}, std::move(codes)});
    std::vector<uint8_t> scale_bytes(scales.size() * 4);
    std::memcpy(scale_bytes.data(), scales.data(), scale_bytes.size());
    out.push_back({{Fp8ScaleName(t->name), DType::kF32, {brows, bcols}}, std::move(scale_bytes)});
  }
  WriteSafetensors(dst + "/model.safetensors", out);
}

}  // namespace qvl
