// The Linear weights a pre-quantized checkpoint stores as codes
// (model/quantization_config.h): the tensors each keeps beside its codes, their checks,
// and the view that decodes them as the reference does (ops/weight_view.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/quantization_config.h"
#include "model/safetensors.h"
#include "ops/weight_view.h"

namespace qvl {

// The tensors a pre-quantized checkpoint keeps the Linear weight `weight_name`
// ("PREFIX.weight") in (model/quantization_config.h); a name is empty when `q` has no such
// tensor.
struct QuantizedWeightNames {
  // PREFIX.weight, PREFIX.weight_packed when packed, PREFIX.qweight (AWQ, GPTQ)
  std::string codes;
  // PREFIX.weight_scale_inv (fp8), PREFIX.weight_scale, PREFIX.scales (AWQ, GPTQ),
  // PREFIX.weight.absmax or PREFIX.SCB (bitsandbytes)
  std::string scales;
  // PREFIX.weight_zero_point when asymmetric, PREFIX.qzeros (AWQ, GPTQ)
  std::string zero_points;
  std::string shape;   // PREFIX.weight_shape when packed (compressed-tensors)
  std::string groups;  // PREFIX.g_idx (GPTQ), PREFIX.weight_g_idx (actorder "group")
};
QuantizedWeightNames QuantizedNames(std::string_view weight_name, const WeightQuantization& q);

// Checks the quantized Linear weight `name` of `shape` ([out, in]) whose codes are `t`
// (PREFIX.weight, or the packed words): its codes match config.json's
// quantization_config, and its scales, zero points, groups and shape are there with
// their shapes and dtypes. Appends their names to `known`. Throws Error(kCorrupt) of one
// line naming the file and the tensor.
void CheckQuantizedWeight(const TensorStore& store, const WeightQuantization& q,
                          std::string_view name, const std::vector<int64_t>& shape,
                          const TensorInfo& t, std::vector<std::string>* known);

// The view of the checked quantized weight `name`, its scales and zero points decoded to
// f32 into `params` (which it points into), each column's group when out of order.
WeightView QuantizedWeightView(const TensorStore& store, const WeightQuantization& q,
                               const std::string& name, std::vector<std::vector<float>>* params);

}  // namespace qvl
