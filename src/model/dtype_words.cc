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
  WeightFormat format;
};
constexpr DtypeWord kDtypeWords[] = {{"f32", WeightFormat::kBF16},
                                     {"bf16", WeightFormat::kBF16Packed},
                                     {"q8", WeightFormat::kQ8},
                                     {"q4", WeightFormat::kQ4},
                                     {"w8a8", WeightFormat::kW8A8}};

}  // namespace

std::string DtypeChoices() {
  std::string words;
  const size_t n = std::size(kDtypeWords);
  for (size_t i = 0; i < n; ++i) {
    words += StrCat(i == 0 ? "" : i + 1 == n ? " or " : ", ", kDtypeWords[i].word);
  }
  return words;
}

WeightFormat ParseDtype(std::string_view flag, std::string_view word) {
  for (const DtypeWord& d : kDtypeWords) {
    if (word == d.word) return d.format;
  }
  Fail(ErrorCode::kInvalidArgument, flag, " ", word, ": use ", DtypeChoices());
}

std::string DtypeName(WeightFormat format) {
  for (const DtypeWord& d : kDtypeWords) {
    if (d.format == format) return d.word;
  }
  return WeightFormatName(format);
}

}  // namespace qvl
