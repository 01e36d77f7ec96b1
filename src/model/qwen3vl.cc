#include "model/qwen3vl.h"

#include <functional>
#include <unordered_map>
#include <utility>

#include "base/cpu_features.h"
#include "base/log.h"

namespace qvl {

WeightFormat DefaultVisionWeights(WeightFormat text_weights) {
  if (IsPacked(text_weights) && ActiveTier() == CpuTier::kAmx) return WeightFormat::kBF16Packed;
  return text_weights;
}

namespace {

// Every matrix the towers multiply with; `vision` tells the tower.
void ForEachLinear(Qwen3VLWeights& w, const std::function<void(WeightView&, bool vision)>& fn) {
  fn(w.vision.patch_embed, true);
  for (VisionBlockWeights& b : w.vision.blocks) {
    for (WeightView* v : {&b.qkv, &b.proj, &b.fc1, &b.fc2}) fn(*v, true);
  }
  fn(w.vision.merger.fc1, true);
  fn(w.vision.merger.fc2, true);
  for (MergerWeights& m : w.vision.deepstack_mergers) {
    fn(m.fc1, true);
    fn(m.fc2, true);
  }
  for (TextLayerWeights& l : w.text.layers) {
    for (WeightView* v :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      fn(*v, false);
    }
  }
  fn(w.text.lm_head, false);
}

}  // namespace

Qwen3VLModel::Qwen3VLModel(ModelFolder folder, const ModelOptions& options)
    : folder_(std::move(folder)),
      options_(options),
      store_(TensorStore::OpenFolder(folder_.dir)),
      weights_(MapQwen3VLWeights(store_, folder_.config)) {
  const WeightQuantization& quant = folder_.config.weight_quant;
  if (quant.present() && quant.codes != DType::kF8E4M3 && quant.bits <= 4 &&
      (options.text_weights == WeightFormat::kQ4 || options.vision_weights == WeightFormat::kQ4)) {
    // The fixtures' W4A16 checkpoint packed to q4 fell from logits cosine 0.870 (q8) to 0.657.
    LogWarn(folder_.dir, ": the checkpoint's weights are ", quant.CodesName(),
            " already, and q4 quantizes them a second time, losing accuracy; --dtype q8 keeps "
            "them as they are");
  }
  ThreadPool pool(0, /*pin=*/false);  // packs weights when the cache misses
  auto format = [&](const WeightView& v, bool vision) {
    return FormatFor(v, options.precision, vision ? options.vision_weights : options.text_weights);
  };
  std::unordered_map<const void*, std::string> names;
  for (const TensorInfo* t : store_.All()) names.emplace(t->data, t->name);
  std::vector<PackedWeightCache::Entry> entries;
  ForEachLinear(weights_, [&](const WeightView& v, bool vision) {
    const WeightFormat f = format(v, vision);
    if (IsPacked(f)) entries.push_back({names[v.data], v, f});
  });
  const std::string dir = options.weight_cache_dir.empty()     ? DefaultWeightCacheDir()
                          : options.weight_cache_dir == "none" ? std::string()
                                                               : options.weight_cache_dir;
  packed_ = PackedWeightCache::Open(dir, folder_.dir, CheckpointKey(store_), entries, pool);

  auto preparer = [&](bool vision) -> LinearPreparer {
    return [&, vision](const WeightView& v) {
      const WeightFormat f = format(v, vision);
      if (IsPacked(f)) {
        LinearWeight w = packed_->Find(v, f);
        if (!w.empty()) return w;
      }
      return LinearWeight::Prepare(v, f, &pool);
    };
  };
  vision_ = std::make_unique<VisionTower>(folder_.config.vision, weights_.vision, options.precision,
                                          preparer(true));
  text_ = std::make_unique<TextDecoder>(folder_.config, weights_.text, options.precision,
                                        preparer(false));
  // Matrices packed or decoded into memory are not read from the checkpoint again, so
  // the pages loading mapped of them (the cache key's windows, the norms and scales read
  // beside them, packing) leave the process: an image request's peak RSS on the 2B from
  // a cached start fell from 2.57 to 2.50 GB (BF16 file) and 2.64 to 2.50 GB (fp8 file).
  // Quantized codes are never multiplied in place, so their scales and zero points are
  // not read again either: 54 MB for the 2B in int4 groups of 128.
  ForEachLinear(weights_, [&](WeightView& v, bool vision) {
    if (!LinearWeight::InPlace(v, format(v, vision))) {
      store_.Release(v.data, static_cast<size_t>(WeightBytes(v)));
    }
    v.block_scales = v.block_zeros = nullptr;
  });
  weights_.quant_params = {};
}

std::unique_ptr<Qwen3VLModel> Qwen3VLModel::Load(const std::string& dir,
                                                 const ModelOptions& options) {
  return std::unique_ptr<Qwen3VLModel>(new Qwen3VLModel(OpenModelFolder(dir), options));
}

}  // namespace qvl
