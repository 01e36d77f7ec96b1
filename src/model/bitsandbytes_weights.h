// bitsandbytes' weights beside their codes (model/quantization_config.h, kBitsAndBytes),
// as transformers saves a model loaded with load_in_4bit or load_in_8bit. A 4-bit
// weight PREFIX.weight keeps its quant_state (bitsandbytes' QuantState.as_dict(packed=True))
// in tensors named PREFIX.weight.KEY: absmax, quant_map, nested_absmax and
// nested_quant_map when double-quantized, and quant_state.bitsandbytes__TYPE, a JSON
// object of its block size, dtype and shape stored as U8 bytes. An 8-bit one keeps its
// rows' absolute maxima in PREFIX.SCB and, in newer files, PREFIX.weight_format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "model/quantization_config.h"
#include "model/safetensors.h"

namespace qvl {

// What a 4-bit weight's quant_state says, checked against the weight it belongs to.
struct Bnb4BitState {
  std::vector<int64_t> shape;  // the weight's [out, in]
  int64_t blocksize = 64;      // consecutive values sharing one absmax
  DType dtype = DType::kBF16;  // the weight's dtype, which dequantize_4bit rounds to
  // Double quantization: absmax as 8-bit codes of nested_quant_map, scaled per
  // nested_blocksize blocks by nested_absmax, plus nested_offset.
  bool nested = false;
  int64_t nested_blocksize = 256;
  float nested_offset = 0;
};

// Checks the 4-bit weight `weight_name` of shape `shape` whose codes are `codes`, and the
// tensors of its quant_state, whose names it appends to `known`. Throws Error(kCorrupt)
// naming the file and the tensor or the quant_state's field.
Bnb4BitState CheckBnb4BitWeight(const TensorStore& store, const WeightQuantization& q,
                                std::string_view weight_name, const std::vector<int64_t>& shape,
                                const TensorInfo& codes, std::vector<std::string>* known);

// The state of a weight CheckBnb4BitWeight has passed.
Bnb4BitState ReadBnb4BitState(const TensorStore& store, const WeightQuantization& q,
                              std::string_view weight_name);

// Its absmax per block in f32, double-quantized ones decoded as bitsandbytes'
// dequantize_blockwise does: nested_quant_map[code] x nested_absmax in f32, then
// + nested_offset.
std::vector<float> Bnb4BitAbsmax(const TensorStore& store, std::string_view weight_name,
                                 const Bnb4BitState& state);

// The name of the scales of weight PREFIX.weight: PREFIX.weight.absmax (4-bit),
// PREFIX.SCB (8-bit).
std::string BnbScalesName(std::string_view weight_name, const WeightQuantization& q);

// Checks an 8-bit weight's PREFIX.weight_format, when there is one, says row-major (0),
// the only layout bitsandbytes still loads; appends its name to `known`.
void CheckBnb8BitFormat(const TensorStore& store, std::string_view weight_name,
                        std::vector<std::string>* known);

// An 8-bit weight's scale from its row's absolute maximum: SCB x (1 / 127) in f32, as
// bitsandbytes' int8 dequantization multiplies.
float Bnb8BitScale(float scb);

}  // namespace qvl
