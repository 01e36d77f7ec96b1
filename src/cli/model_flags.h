// The flags every verb that loads a model shares (-m, --dtype, --vision-dtype,
// --kv-cache-type, --threads, --no-download), and their meaning: which folder, which
// weight and cache formats.
#pragma once

#include <string>

#include "model/dtype_words.h"
#include "model/qwen3vl.h"

namespace CLI {
class App;
}

namespace qvl::cli {

// The model folder of -m for a verb that never downloads (`verb`: "qvl info"): a folder,
// or ORG/NAME complete in the Hugging Face cache. Throws Error naming `qvl pull` for a
// model that is not there.
std::string OnDiskModelFolder(const std::string& spec, const std::string& verb);

struct ModelFlags {
  std::string model;              // a folder, or ORG/NAME from the Hugging Face hub
  std::string dtype = "q8";       // text decoder: one of DtypeChoices()
  std::string vision_dtype = "";  // vision tower; "" = DefaultVisionWeights(--dtype)
  std::string weight_cache;       // packed-weight cache folder; "none" = keep in memory
  std::string kv_cache_type;      // one of KvCacheTypeChoices(); "" = bf16 (f32 with --dtype f32)
  int threads = 0;                // as given; Threads() is what to use
  bool no_download = false;

  // `kv_cache`: the verb runs the model and takes --kv-cache-type.
  void AddTo(CLI::App* verb, bool model_required = true, bool kv_cache = true);
  // The model folder: the path as given, or ORG/NAME found in (or pulled into) the
  // Hugging Face cache. Throws Error naming what is missing.
  std::string ResolveFolder() const;
  // The same without the network: "" when ORG/NAME has to be pulled first.
  std::string ResolveLocalFolder() const;
  // Formats and precision for the chosen dtypes. Throws Error(kInvalidArgument) naming
  // the flag for an unknown dtype.
  ModelOptions Options() const;
  // --threads capped to this machine's CPUs (CapThreads); 0 = DefaultThreadCount().
  int Threads() const;
};

}  // namespace qvl::cli
