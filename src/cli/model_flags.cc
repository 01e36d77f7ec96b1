#include "cli/model_flags.h"

#include <CLI/CLI.hpp>
#include <iterator>

#include "base/error.h"
#include "cli/flag_ranges.h"
#include "hub/model_resolver.h"
#include "ops/weight_format.h"

namespace qvl::cli {
namespace {

// The one vocabulary of --dtype and --vision-dtype, for every verb. f32 computes in
// float32 on the checkpoint's own (exact) weights: the reference check. bf16 multiplies
// bf16 weights with bf16-rounded activations; q8 and q4 quantize the weights (a scale per
// 32) and the activations to int8 (a step per 32); w8a8 rotates both and quantizes them to
// int8 with a scale per output and a step per row.
struct DtypeWord {
  const char* word;
  WeightFormat format;
};
constexpr DtypeWord kDtypeWords[] = {{"f32", WeightFormat::kBF16},
                                     {"bf16", WeightFormat::kBF16Packed},
                                     {"q8", WeightFormat::kQ8},
                                     {"q4", WeightFormat::kQ4},
                                     {"w8a8", WeightFormat::kW8A8}};

WeightFormat ParseDtype(const std::string& flag, const std::string& value) {
  for (const DtypeWord& d : kDtypeWords) {
    if (value == d.word) return d.format;
  }
  Fail(ErrorCode::kInvalidArgument, flag, " ", value, ": use ", DtypeChoices());
}

}  // namespace

std::string DtypeChoices() {
  std::string words;
  const size_t n = std::size(kDtypeWords);
  for (size_t i = 0; i < n; ++i) {
    words += StrCat(i == 0 ? "" : i + 1 == n ? " or " : ", ", kDtypeWords[i].word);
  }
  return words;
}

std::string DtypeFlagName(WeightFormat format) {
  for (const DtypeWord& d : kDtypeWords) {
    if (d.format == format) return d.word;
  }
  // A format no flag selects (row-major float32) keeps its own name.
  return WeightFormatName(format);
}

void ModelFlags::AddTo(CLI::App* verb, bool model_required) {
  CLI::Option* m =
      verb->add_option("-m,--model", model, "model folder, or ORG/NAME from the Hugging Face hub");
  if (model_required) m->required();
  verb->add_option("--dtype", dtype, "text decoder weights: " + DtypeChoices())
      ->capture_default_str();
  verb->add_option("--vision-dtype", vision_dtype,
                   StrCat("vision tower weights: ", DtypeChoices(),
                          " (default: as --dtype; bf16 on CPUs with AMX)"));
  verb->add_option("--weight-cache", weight_cache,
                   "folder for packed weights (default ~/.cache/qvl; 'none' keeps them in memory)");
  verb->add_option("-t,--threads", threads, "compute threads (default: one per physical core)")
      ->check(CLI::Range(0, kMaxThreadsFlag));
  verb->add_flag("--no-download", no_download, "never download: ORG/NAME must be in the cache");
}

std::string ModelFlags::ResolveFolder() const {
  hub::ResolveOptions options;
  options.allow_download = !no_download;
  return hub::ResolveModel(model, options);
}

std::string ModelFlags::ResolveLocalFolder() const {
  hub::ResolveOptions options;
  options.allow_download = !no_download;
  return hub::ResolveLocalModel(model, options);
}

std::string OnDiskModelFolder(const std::string& spec, const std::string& verb) {
  hub::ResolveOptions options;
  options.allow_download = false;
  options.downloads_off_by = verb + " never downloads";
  return hub::ResolveLocalModel(spec, options);
}

ModelOptions ModelFlags::Options() const {
  ModelOptions o;
  o.text_weights = ParseDtype("--dtype", dtype);
  o.vision_weights = vision_dtype.empty() ? DefaultVisionWeights(o.text_weights)
                                          : ParseDtype("--vision-dtype", vision_dtype);
  const bool exact = dtype == "f32" && (vision_dtype.empty() || vision_dtype == "f32");
  o.precision = exact ? MatmulPrecision::kF32 : MatmulPrecision::kBF16;
  o.kv_dtype = exact ? DType::kF32 : DType::kBF16;
  o.weight_cache_dir = weight_cache;
  return o;
}

int ModelFlags::Threads() const { return CapThreads(threads, "--threads"); }

}  // namespace qvl::cli
