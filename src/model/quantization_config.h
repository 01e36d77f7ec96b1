// How a pre-quantized checkpoint stores the weights of its Linear layers, read from
// config.json's quantization_config. qvl decodes each such weight once, to the values the
// reference computes with when it loads the checkpoint, and then keeps or packs it like
// an unquantized one (--dtype). Everything else (AWQ's and GPTQ's other layouts, sparse
// or nvfp4 compressed-tensors) is refused naming the field.
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.h"
#include "ops/weight_view.h"

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
    // bitsandbytes' checkpoints (quant_method "bitsandbytes", transformers'
    // load_in_4bit / load_in_8bit). 4-bit: PREFIX.weight U8, two nf4 or fp4 codes a byte
    // over the flattened weight; PREFIX.weight.absmax one scale per block of consecutive
    // values (itself 8-bit codes scaled per 256 when double-quantized); the block size,
    // the weight's dtype and shape in the JSON of
    // PREFIX.weight.quant_state.bitsandbytes__TYPE; a weight is level x absmax in f32
    // rounded to that dtype, as dequantize_4bit does. 8-bit (LLM.int8): PREFIX.weight I8,
    // PREFIX.SCB F32 a row's absolute maximum; a weight is code x (SCB / 127).
    kBitsAndBytes,
    // GPTQ checkpoints as GPTQModel and AutoGPTQ write them (quant_method "gptq", format
    // "gptq" or "gptq_v2"): PREFIX.qweight I32 [in / (32 / bits), out] packs the codes
    // of consecutive inputs a word (ops/weight_view.h WordLayout::kGptq), PREFIX.qzeros
    // I32 [groups, out / (32 / bits)] the zero points of consecutive outputs, stored
    // minus 1 in the "gptq" (v1) format; PREFIX.scales [groups, out]; PREFIX.g_idx I32
    // [in] each input's group (out of order with desc_act). A weight is (code - zero
    // point) x scale computed in the scales' dtype, as GPTQModel's dequantize_weight
    // does after adding 1 to every field of a v1 qzeros word.
    kGptq,
  };
  Method method = Method::kNone;
  DType codes = DType::kF8E4M3;  // F8_E4M3, I8, I32 (packed codes of `bits` bits), U8
  int bits = 8;
  bool symmetric = true;  // false: a zero point per block
  // The block one scale covers; 0 is the whole of the weight's rows or columns (the
  // tensor strategy is {0, 0}, channel {1, 0}, group {1, group_size}).
  int block_rows = 0;
  int block_cols = 0;
  FourBitType four_bit = FourBitType::kNf4;  // U8 codes: the levels they stand for
  // Each input column names its group in a tensor beside the weight (GPTQ's g_idx,
  // compressed-tensors' weight_g_idx with actorder "group").
  bool column_groups = false;
  bool zeros_minus_one = false;  // GPTQ's v1 format

  bool present() const { return method != Method::kNone; }
  bool packed() const { return codes == DType::kI32; }
  // quant_method as config.json spells it: "fp8", "compressed-tensors", "awq",
  // "bitsandbytes", "gptq".
  std::string MethodName() const;
  // "fp8 e4m3", "int4", "nf4", ...: the codes as a user would name them.
  std::string CodesName() const;
  // What one scale covers: "128x128 block", "channel", "group of 32", "tensor", "block"
  // (bitsandbytes' 4-bit, whose size each weight gives).
  std::string BlocksName() const;
};

// The quantization_config of config.json's `top` object; {} when there is none.
WeightQuantization ParseWeightQuantization(const JsonFieldReader& top);

}  // namespace qvl
