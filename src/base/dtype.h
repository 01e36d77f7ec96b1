// Element types of tensors in files and in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace qvl {

enum class DType : uint8_t {
  kF32,
  kBF16,
  kF16,
  kF64,
  kI64,
  kI32,
  kI16,
  kI8,
  kU8,
  kBool,
  kF8E4M3,  // float8 e4m3 ("fn"), the weights of fp8 checkpoints
};

// Bytes per element.
size_t DTypeSize(DType t);

// Safetensors spelling: "F32", "BF16", "I64", ...
std::string_view DTypeName(DType t);

// F32, BF16 or F16: the dtypes float weights, norms and scales come in.
inline bool IsFloatWeight(DType t) {
  return t == DType::kF32 || t == DType::kBF16 || t == DType::kF16;
}

// Parses the safetensors spelling; returns false for an unknown name.
bool ParseDType(std::string_view name, DType* out);

// Every spelling ParseDType knows, for messages: "F32, BF16, ...".
std::string KnownDTypeNames();

}  // namespace qvl
