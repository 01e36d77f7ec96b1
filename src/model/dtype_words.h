// The words users name weight formats by (--dtype, --vision-dtype, and what the server
// reports), one vocabulary for every verb and route.
#pragma once

#include <string>
#include <string_view>

#include "base/dtype.h"
#include "ops/weight_format.h"

namespace qvl {

// "f32, bf16, q8, q4 or w8a8", for help and error messages.
std::string DtypeChoices();

// The format of `word`. Throws Error(kInvalidArgument) naming `flag` and the choices.
WeightFormat ParseDtype(std::string_view flag, std::string_view word);

// The word for `format` (packed bf16 panels are "bf16", the checkpoint's own bf16
// matrices "f32"); a format no word selects keeps its own name.
std::string DtypeName(WeightFormat format);

// The KV cache's element types (--kv-cache-type): "f32, bf16 or q8" (q8: int8 codes with
// a scale per token and 32 dims, DType::kI8).
std::string KvCacheTypeChoices();
DType ParseKvCacheType(std::string_view flag, std::string_view word);
std::string KvCacheTypeName(DType dtype);

}  // namespace qvl
