// qvl quantize -m DIR [--dtype q8] [--vision-dtype q8] [--weight-cache DIR]: packs
// (quantizes) the model's linear weights once into the packed-weight cache, so later
// starts of serve / run / bench map them in well under a second. Running it again is
// cheap: a valid cache is only checked.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "base/error.h"
#include "base/timer.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "model/qwen3vl.h"

namespace qvl::cli {

void AddQuantizeVerb(CLI::App& app) {
  auto flags = std::make_shared<ModelFlags>();
  CLI::App* verb = app.add_subcommand(
      "quantize", "Pack / quantize a model's weights into the cache for an instant start");
  flags->AddTo(verb, /*model_required=*/true, /*kv_cache=*/false);
  verb->callback([flags] {
    const ModelOptions options = flags->Options();
    const std::string dir = flags->ResolveFolder();
    const Stopwatch watch;
    auto model = Qwen3VLModel::Load(dir, options);
    const PackedWeightCache& packed = model->packed_weights();
    const std::string formats = StrCat("text ", DtypeName(options.text_weights), ", vision ",
                                       DtypeName(options.vision_weights));
    if (packed.bytes() == 0) {
      std::printf("%s: %s use the checkpoint's matrices; nothing to pack\n", dir.c_str(),
                  formats.c_str());
      return;
    }
    if (packed.path().empty()) {
      Fail(ErrorCode::kIo, "could not write the packed-weight cache for ", dir,
           " (see the warning above)");
    }
    std::printf(
        "%s: %s -> %s (%.1f MiB, %s) in %.1f s\n", dir.c_str(), formats.c_str(),
        packed.path().c_str(), static_cast<double>(packed.bytes()) / (1 << 20),
        packed.source() == PackedWeightCache::Source::kMapped ? "already up to date" : "written",
        watch.Seconds());
  });
}

}  // namespace qvl::cli
