// Tests only: a model folder rewritten as a pre-quantized checkpoint
// (model/quantization_config.h), with this file's own quantizer and decoder rather than
// the loader's:
// - Qwen's -FP8 releases (transformers' Fp8Quantize): every Linear weight as F8_E4M3
//   codes, one f32 scale per block in PREFIX.weight_scale_inv;
// - llm-compressor's compressed-tensors formats: fp8, int8, or int4/int8 packed into I32
//   words, per tensor, channel, group or block, symmetric or with zero points, scales in
//   F32 or BF16;
// - AutoAWQ's "gemm" layout: int4 with zero points in groups, transposed, F16 scales;
// - bitsandbytes' 4-bit (nf4 or fp4 over the flattened weight, absmax per block, maybe
//   double-quantized, its quant_state as JSON bytes) and 8-bit (int8 per row, SCB);
// - GPTQ's layout: 2, 4 or 8 bits packed along the inputs, zero points along the outputs
//   (minus 1 in the v1 format), F16 scales, g_idx, the groups' columns permuted with
//   act-order (as compressed-tensors' with actorder "group" and weight_g_idx).
// All but Qwen's leave the deepstack mergers unquantized, as an "ignore" list would.
// With `dequantized`, the same weights are written back as the F32 values the reference
// decodes them to: what the quantized folder must compute as.
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
#include "model/quant_schemes_for_test.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "ops/weight_view.h"

namespace qvl {

inline void WriteQuantizedFolder(const std::string& src, const std::string& dst,
                                 const TestQuantScheme& scheme, bool dequantized) {
  namespace fs = std::filesystem;
  namespace qt = quantized_for_test;
  using nlohmann::json;
  const WeightQuantization& q = scheme.quant;
  const bool fp8 = q.method == WeightQuantization::Method::kFp8;
  const bool gptq = q.method == WeightQuantization::Method::kGptq;
  fs::create_directories(dst);
  for (const fs::directory_entry& e : fs::directory_iterator(src)) {
    const std::string name = e.path().filename();
    if (name != "model.safetensors" && name != "config.json") {
      fs::copy_file(e.path(), fs::path(dst) / name, fs::copy_options::overwrite_existing);
    }
  }
  json config = json::parse(ReadFileToString(src + "/config.json"));
  if (!dequantized && fp8) {
    config["quantization_config"] = {{"activation_scheme", "dynamic"},
                                     {"fmt", "e4m3"},
                                     {"quant_method", "fp8"},
                                     {"weight_block_size", {q.block_rows, q.block_cols}}};
  } else if (!dequantized && q.method == WeightQuantization::Method::kAwq) {
    config["quantization_config"] = {
        {"quant_method", "awq"},      {"bits", 4},
        {"group_size", q.block_cols}, {"zero_point", true},
        {"version", "gemm"},          {"modules_to_not_convert", {"deepstack_merger_list"}}};
  } else if (!dequantized && gptq) {
    config["quantization_config"] = {{"quant_method", "gptq"},
                                     {"bits", q.bits},
                                     {"group_size", q.block_cols > 0 ? q.block_cols : -1},
                                     {"desc_act", scheme.column_order},
                                     {"sym", scheme.gptq_symmetric},
                                     {"checkpoint_format", scheme.gptq_v1 ? "gptq" : "gptq_v2"},
                                     {"damp_percent", 0.01},
                                     {"true_sequential", true},
                                     {"static_groups", false},
                                     {"pack_dtype", "int32"},
                                     {"lm_head", false},
                                     {"meta", {{"quantizer", {"test"}}}}};
  } else if (!dequantized && q.method == WeightQuantization::Method::kBitsAndBytes) {
    const bool four = q.codes == DType::kU8;
    config["quantization_config"] = {
        {"quant_method", "bitsandbytes"},
        {"_load_in_4bit", four},
        {"_load_in_8bit", !four},
        {"load_in_4bit", four},
        {"load_in_8bit", !four},
        {"bnb_4bit_compute_dtype", "bfloat16"},
        {"bnb_4bit_quant_storage", "uint8"},
        {"bnb_4bit_quant_type", q.four_bit == FourBitType::kNf4 ? "nf4" : "fp4"},
        {"bnb_4bit_use_double_quant", scheme.bnb_nested},
        {"llm_int8_enable_fp32_cpu_offload", false},
        {"llm_int8_has_fp16_weight", false},
        {"llm_int8_skip_modules", {"lm_head", "deepstack_merger_list"}},
        {"llm_int8_threshold", 6.0}};
  } else if (!dequantized) {
    json weights = {
        {"num_bits", q.bits},       {"type", q.codes == DType::kF8E4M3 ? "float" : "int"},
        {"symmetric", q.symmetric}, {"strategy", scheme.strategy},
        {"group_size", nullptr},    {"block_structure", nullptr},
        {"dynamic", false},         {"actorder", nullptr},
        {"observer", "minmax"}};
    if (scheme.strategy == "group") weights["group_size"] = q.block_cols;
    if (q.column_groups) weights["actorder"] = "group";
    if (scheme.strategy == "block") weights["block_structure"] = {q.block_rows, q.block_cols};
    config["quantization_config"] = {
        {"quant_method", "compressed-tensors"},
        {"format", scheme.format},
        {"quantization_status", "compressed"},
        {"ignore", {"re:.*deepstack_merger_list.*"}},
        {"sparsity_config", json::object()},
        {"config_groups",
         {{"group_0",
           {{"targets", {"Linear"}}, {"weights", weights}, {"input_activations", nullptr}}}}}};
  }
  std::ofstream(dst + "/config.json") << config.dump(2);

  const ModelConfig parsed = ParseModelConfig(config.dump(), "config.json");
  std::vector<std::string> linear;
  for (const ExpectedTensor& e : ExpectedQwen3VLTensors(parsed)) {
    if (IsLinearWeight(e) && (fp8 || e.name.find("deepstack_merger_list") == std::string::npos)) {
      linear.push_back(e.name);
    }
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
    if (q.method == WeightQuantization::Method::kBitsAndBytes) {
      qt::AppendBitsAndBytes(t->name, values, rows, cols, scheme, dequantized, &out);
      continue;
    }
    const int64_t br = q.block_rows > 0 ? q.block_rows : rows;
    const int64_t bc = q.block_cols > 0 ? q.block_cols : cols;
    const int64_t grows = (rows + br - 1) / br, gcols = (cols + bc - 1) / bc;
    // Each column's group: consecutive, or (column_order) column c takes the place of
    // column 5 c + 3 mod cols, as an act-order GPTQ permutes them.
    std::vector<int32_t> column_group(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) {
      column_group[c] = static_cast<int32_t>((scheme.column_order ? (5 * c + 3) % cols : c) / bc);
    }
    const bool symmetric = gptq ? scheme.gptq_symmetric : q.symmetric;
    std::vector<int> codes(static_cast<size_t>(rows * cols));
    std::vector<float> scales(static_cast<size_t>(grows * gcols));
    std::vector<int> zeros(scales.size(), 0);
    const int qmin = -(1 << (q.bits - 1)), qmax = (1 << (q.bits - 1)) - 1;
    for (int64_t gr = 0; gr < grows; ++gr) {
      const int64_t r0 = gr * br, r1 = std::min(rows, r0 + br);
      std::vector<float> lo(static_cast<size_t>(gcols), 0.0f), hi(lo);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          lo[column_group[c]] = std::min(lo[column_group[c]], values[r * cols + c]);
          hi[column_group[c]] = std::max(hi[column_group[c]], values[r * cols + c]);
        }
      }
      std::vector<float> to_code(static_cast<size_t>(gcols), 1.0f);  // value -> code
      for (int64_t gc = 0; gc < gcols; ++gc) {
        const size_t g = static_cast<size_t>(gr * gcols + gc);
        const float amax = std::max(-lo[gc], hi[gc]);
        if (fp8) {
          to_code[gc] = amax > 0 ? 448.0f / amax : 1.0f;
          scales[g] = 1.0f / to_code[gc];
          continue;
        }
        const float range = q.codes == DType::kF8E4M3 ? 448.0f
                            : symmetric               ? static_cast<float>(qmax)
                                                      : static_cast<float>(qmax - qmin);
        const float span = symmetric ? amax : hi[gc] - lo[gc];
        scales[g] = qt::InDType(scheme.scale_dtype, span > 0 ? span / range : 1.0f);
        if (!symmetric) {
          zeros[g] =
              std::clamp(static_cast<int>(std::nearbyint(-lo[gc] / scales[g])) + qmin, qmin, qmax);
        }
      }
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const size_t g = static_cast<size_t>(gr * gcols + column_group[c]);
          const float v = values[r * cols + c];
          codes[static_cast<size_t>(r * cols + c)] =
              q.codes == DType::kF8E4M3
                  ? F32ToF8E4M3(fp8 ? v * to_code[column_group[c]] : v / scales[g])
                  : std::clamp(static_cast<int>(std::nearbyint(v / scales[g])) + zeros[g], qmin,
                               qmax);
        }
      }
    }
    const QuantizedWeightNames names = QuantizedNames(t->name, q);
    if (dequantized) {
      std::vector<float> decoded(codes.size());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const size_t g = static_cast<size_t>((r / br) * gcols + column_group[c]);
          const size_t i = static_cast<size_t>(r * cols + c);
          const double code = q.codes == DType::kF8E4M3 ? qt::Fp8Value(codes[i]) : codes[i];
          decoded[i] = qt::InDType(fp8 ? DType::kF32 : scheme.scale_dtype,
                                   static_cast<float>((code - zeros[g]) * scales[g]));
        }
      }
      out.push_back(
          {{t->name, DType::kF32, t->shape}, qt::Bytes(decoded.data(), 4 * decoded.size())});
      continue;
    }
    if (q.column_groups) {
      out.push_back({{names.groups, DType::kI32, {cols}},
                     qt::Bytes(column_group.data(), 4 * column_group.size())});
    }
    if (gptq) {  // codes and zero points transposed, packed along the inputs and outputs
      std::vector<int> codes_t(codes.size()), zeros_t(zeros.size());
      std::vector<float> scales_t(scales.size());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) codes_t[c * rows + r] = codes[r * cols + c];
      }
      for (int64_t r = 0; r < grows; ++r) {
        for (int64_t c = 0; c < gcols; ++c) {
          zeros_t[c * grows + r] = zeros[r * gcols + c];
          scales_t[c * grows + r] = scales[r * gcols + c];
        }
      }
      std::vector<int64_t> shape;
      std::vector<uint8_t> words = qt::Pack(codes_t, cols, rows, q.bits, 0, &shape);
      out.push_back({{names.codes, DType::kI32, shape}, std::move(words)});
      words = qt::Pack(zeros_t, gcols, grows, q.bits, 1, &shape);
      if (scheme.gptq_v1) {  // GPTQModel's v2-to-v1: 1 taken from every field of a word
        uint32_t ones = 0;
        for (int k = 0; k < 32 / q.bits; ++k) ones |= 1u << (q.bits * k);
        for (size_t w = 0; w < words.size(); w += 4) {
          uint32_t word;
          std::memcpy(&word, &words[w], 4);
          word -= ones;
          std::memcpy(&words[w], &word, 4);
        }
      }
      out.push_back({{names.zero_points, DType::kI32, shape}, std::move(words)});
      out.push_back({{names.scales, scheme.scale_dtype, {gcols, grows}},
                     qt::ScaleBytes(scales_t, scheme.scale_dtype)});
      continue;
    }
    if (q.method == WeightQuantization::Method::kAwq) {
      std::vector<int64_t> shape;
      out.push_back({{names.codes, DType::kI32, {}}, qt::PackAwq(codes, rows, cols, &shape)});
      out.back().spec.shape = shape;
      out.push_back(
          {{names.zero_points, DType::kI32, {}}, qt::PackAwq(zeros, grows, gcols, &shape)});
      out.back().spec.shape = shape;
      std::vector<float> transposed(scales.size());
      for (int64_t r = 0; r < grows; ++r) {
        for (int64_t c = 0; c < gcols; ++c) transposed[c * grows + r] = scales[r * gcols + c];
      }
      out.push_back({{names.scales, scheme.scale_dtype, {gcols, grows}},
                     qt::ScaleBytes(transposed, scheme.scale_dtype)});
      continue;
    }
    if (q.packed()) {
      std::vector<int64_t> shape;
      std::vector<uint8_t> words = qt::Pack(codes, rows, cols, q.bits, 1, &shape);
      out.push_back({{names.codes, DType::kI32, shape}, std::move(words)});
      const std::vector<int64_t> dims = {rows, cols};
      out.push_back({{names.shape, DType::kI64, {2}}, qt::Bytes(dims.data(), 16)});
    } else {
      std::vector<uint8_t> bytes(codes.size());
      for (size_t i = 0; i < codes.size(); ++i) bytes[i] = static_cast<uint8_t>(codes[i]);
      out.push_back({{t->name, q.codes, t->shape}, std::move(bytes)});
    }
    const std::vector<int64_t> scale_shape = scheme.strategy == "tensor" ? std::vector<int64_t>{1}
                                             : scheme.strategy == "channel"
                                                 ? std::vector<int64_t>{rows, 1}
                                                 : std::vector<int64_t>{grows, gcols};
    out.push_back({{names.scales, scheme.scale_dtype, scale_shape},
                   qt::ScaleBytes(scales, scheme.scale_dtype)});
    if (!q.symmetric) {
      std::vector<int64_t> shape = {grows, gcols};
      std::vector<uint8_t> bytes;
      if (q.packed()) {
        bytes = qt::Pack(zeros, grows, gcols, q.bits, 0, &shape);
      } else {
        for (int z : zeros) bytes.push_back(static_cast<uint8_t>(z));
      }
      out.push_back(
          {{names.zero_points, q.packed() ? DType::kI32 : DType::kI8, shape}, std::move(bytes)});
    }
  }
  WriteSafetensors(dst + "/model.safetensors", out);
}

}  // namespace qvl
