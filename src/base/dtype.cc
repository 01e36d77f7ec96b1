#include "base/dtype.h"

namespace qvl {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "F32", 4},   {DType::kBF16, "BF16", 2},      {DType::kF16, "F16", 2},
    {DType::kF64, "F64", 8},   {DType::kI64, "I64", 8},        {DType::kI32, "I32", 4},
    {DType::kI16, "I16", 2},   {DType::kI8, "I8", 1},          {DType::kU8, "U8", 1},
    {DType::kBool, "BOOL", 1}, {DType::kF8E4M3, "F8_E4M3", 1},
};

}  // namespace

size_t DTypeSize(DType t) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.type == t) return d.size;
  }
  return 0;
}

std::string_view DTypeName(DType t) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.type == t) return d.name;
  }
  return "?";
}

bool ParseDType(std::string_view name, DType* out) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == name) {
      *out = d.type;
      return true;
    }
  }
  return false;
}

std::string KnownDTypeNames() {
  std::string names;
  for (const DTypeInfo& d : kDTypes) {
    if (!names.empty()) names += ", ";
    names += d.name;
  }
  return names;
}

}  // namespace qvl
