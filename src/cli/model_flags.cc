#include "cli/model_flags.h"

#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/flag_ranges.h"
#include "hub/model_resolver.h"
#include "model/dtype_words.h"

namespace qvl::cli {

void ModelFlags::AddTo(CLI::App* verb, bool model_required, bool kv_cache) {
  CLI::Option* m =
      verb->add_option("-m,--model", model, "model folder, or ORG/NAME from the Hugging Face hub")
          ->envname("QVL_MODEL");
  if (model_required) m->required();
  verb->add_option("--dtype", dtype, "text decoder weights: " + DtypeChoices())
      ->capture_default_str();
  verb->add_option("--vision-dtype", vision_dtype,
                   StrCat("vision tower weights: ", DtypeChoices(),
                          " (default: as --dtype; bf16 on CPUs with AMX)"));
  if (kv_cache) {
    verb->add_option("--kv-cache-type", kv_cache_type,
                     StrCat("KV cache elements: ", KvCacheTypeChoices(),
                            " (q8: about half the memory of bf16; default bf16, f32 with "
                            "--dtype f32)"));
  }
  verb->add_option("--weight-cache", weight_cache,
                   "folder for packed weights (default ~/.cache/qvl; 'none' keeps them in memory)");
  verb->add_option("-t,--threads", threads,
                   "compute threads (default: one per physical core, at most the CPU time a "
                   "container grants)")
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
  o.kv_dtype = !kv_cache_type.empty() ? ParseKvCacheType("--kv-cache-type", kv_cache_type)
               : exact                ? DType::kF32
                                      : DType::kBF16;
  o.weight_cache_dir = weight_cache;
  return o;
}

int ModelFlags::Threads() const { return CapThreads(threads, "--threads"); }

}  // namespace qvl::cli
