#include "model/dtype_words.h"

#include <iterator>

#include "base/error.h"

namespace qvl {
namespace {

// f32 computes in float32 on the checkpoint's own (exact) weights: the reference check.
// bf16 multiplies bf16 weights with bf16-rounded activations; q8 and q4 quantize the
// weights (a scale per 32) and the activations to int8 (a step per 32); w8a8 rotates both
// and quantizes them to int8 with a scale per output and a step per row.
struct DtypeWord {
  const char* word;
  WeightFormat value;
};
constexpr DtypeWord kDtypeWords[] = {{"f32", WeightFormat::kBF16},
                                     {"bf16", WeightFormat::kBF16Packed},
                                     {"q8", WeightFormat::kQ8},
                                     {"q4", WeightFormat::kQ4},
                                     {"w8a8", WeightFormat::kW8A8}};

// The words users name a KV cache's elements by (--kv-cache-type).
struct KvWord {
  const char* word;
  DType value;
};
constexpr KvWord kKvWords[] = {{"f32", DType::kF32}, {"bf16", DType::kBF16}, {"q8", DType::kI8}};

// "a, b or c" of the words of `table`.
template <typename Table>
std::string Choices(const Table& table) {
  std::string words;
  const size_t n = std::size(table);
  for (size_t i = 0; i < n; ++i) {
    words += StrCat(i == 0 ? "" : i + 1 == n ? " or " : ", ", table[i].word);
  }
  return words;
}

// The value of `word` in `table`; an error naming `flag` and the choices otherwise.
template <typename Table>
auto Parse(const Table& table, std::string_view flag, std::string_view word) {
  for (const auto& entry : table) {
    if (word == entry.word) return entry.value;
  }
  Fail(ErrorCode::kInvalidArgument, flag, " ", word, ": use ", Choices(table));
}

// The word of `value` in `table`, or nullptr.
template <typename Table, typename Value>
const char* WordOf(const Table& table, Value value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.word;
  }
  return nullptr;
}

}  // namespace

std::string DtypeChoices() { return Choices(kDtypeWords); }

WeightFormat ParseDtype(std::string_view flag, std::string_view word) {
  return Parse(kDtypeWords, flag, word);
}

std::string DtypeName(WeightFormat format) {
  const char* word = WordOf(kDtypeWords, format);
  return word != nullptr ? word : WeightFormatName(format);
}

std::string KvCacheTypeChoices() { return Choices(kKvWords); }

DType ParseKvCacheType(std::string_view flag, std::string_view word) {
  return Parse(kKvWords, flag, word);
}

std::string KvCacheTypeName(DType dtype) {
  const char* word = WordOf(kKvWords, dtype);
  return word != nullptr ? std::string(word) : std::string(DTypeName(dtype));
}

}  // namespace qvl
