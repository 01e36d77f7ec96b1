// How a pre-quantized checkpoint stores the weights of its Linear layers, read from
// config.json's quantization_config. qvl decodes each such weight once, to the values the
// reference computes with when it loads the checkpoint, and then keeps or packs it like
// an unquantized one (--dtype). Everything else (AWQ's and GPTQ's own layouts,
// bitsandbytes, sparse or nvfp4 compressed-tensors) is refused naming the field.
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.h"

namespace qvl {

class JsonFieldReader;

struct WeightQuantization {
  enum class Method {
    kNone,
    // Qwen's -FP8 releases (quant_method "fp8", DeepSeek-V3's layout, transformers'
    // FineGrainedFP8): PREFIX.weight F8_E4M3, PREFIX.weight_scale_inv one scale per block;
    // a weight is code x scale in f32 (Fp8Dequantize).
    kFp8,
    // llm-compressor's checkpoints (quant_method "compressed-tensors"): codes in
    // PREFIX.weight (F8_E4M3 for "float-quantized", I8 for "int-quantized") or packed
    // into I32 words in PREFIX.weight_packed beside PREFIX.weight_shape
    // ("pack-quantized"); PREFIX.weight_scale one scale per block, PREFIX.weight_zero_point
    // when asymmetric; a weight is (code - zero point) x scale computed in the scales'
    // dtype, as compressed-tensors' dequantize does.
    kCompressedTensors,
    // AutoAWQ's checkpoints (quant_method "awq", version "gemm"): PREFIX.qweight I32
    // [in, out / 8] and PREFIX.qzeros I32 [in / group, out / 8] pack the 4-bit codes and
    // zero points of 8 outputs a word (ops/weight_view.h AwqCode), PREFIX.scales
    // [in / group, out]; a weight is (code - zero point) x scale computed in the scales'
    // dtype (F16), as AutoAWQ's dequantize_gemm does.
    kAwq,
  };
  Method method = Method::kNone;
  DType codes = DType::kF8E4M3;  // F8_E4M3, I8, or I32 (packed codes of `bits` bits)
  int bits = 8;
  bool symmetric = true;  // false: a zero point per block
  // The block one scale covers; 0 is the whole of the weight's rows or columns (the
  // tensor strategy is {0, 0}, channel {1, 0}, group {1, group_size}).
  int block_rows = 0;
  int block_cols = 0;

  bool present() const { return method != Method::kNone; }
  bool packed() const { return codes == DType::kI32; }
  // quant_method as config.json spells it: "fp8", "compressed-tensors", "awq".
  std::string MethodName() const;
  // "fp8 e4m3", "int4", ...: the codes as a user would name them.
  std::string CodesName() const;
  // What one scale covers: "128x128 block", "channel", "group of 32", "tensor".
  std::string BlocksName() const;
};

// The quantization_config of config.json's `top` object; {} when there is none.
WeightQuantization ParseWeightQuantization(const JsonFieldReader& top);

}  // namespace qvl
