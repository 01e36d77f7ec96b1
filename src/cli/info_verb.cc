// qvl info [-m DIR] [--json]: validates a model folder completely (config, every
// tensor's name, shape and dtype, tokenizer, chat template and preprocessor files) and
// describes it and this CPU. Any problem is one error line and a non-zero exit.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/bandwidth_probe.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "cli/model_check.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "engine/loaded_model.h"
#include "model/bitsandbytes_weights.h"
#include "model/model_folder.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "ops/compute_probe.h"

namespace qvl::cli {
namespace {

struct PartTotals {
  size_t tensors = 0;
  int64_t parameters = 0;
  uint64_t bytes = 0;
  std::set<std::string> dtypes;
};

std::string Thousands(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string Join(const std::set<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : "+") + item;
  return s;
}

// "[5, 11, 17]" from a JSON list of numbers.
std::string List(const nlohmann::ordered_json& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += StrCat(i ? ", " : "", items[i].dump());
  return s + "]";
}

std::string FileName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Parameters, bytes and dtypes per part, counted over the tensors the model uses.
std::map<std::string, PartTotals> CountParts(const TensorStore& store, const ModelConfig& config) {
  std::map<std::string, PartTotals> parts;
  for (const ExpectedTensor& e : ExpectedQwen3VLTensors(config)) {
    const TensorInfo* f = store.Find(e.name);
    const TensorInfo& t =
        f != nullptr ? *f : store.Require(QuantizedNames(e.name, config.weight_quant).codes);
    PartTotals& p = parts[e.part];
    p.tensors += 1;
    p.parameters += e.numel();
    p.bytes += t.nbytes;
    p.dtypes.insert(std::string(DTypeName(t.dtype)));
  }
  return parts;
}

const char* PartLabel(const std::string& part) {
  if (part == "vision") return "vision tower";
  if (part == "merger") return "mergers (main + deepstack)";
  return "text decoder (incl. embeddings)";
}

nlohmann::ordered_json Describe(const ModelFolder& f, const TensorStore& store) {
  const ModelConfig& c = f.config;
  const TextConfig& t = c.text;
  const VisionConfig& v = c.vision;
  nlohmann::ordered_json j;
  j["model"] = f.dir;
  j["model_type"] = c.model_type;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const std::string& path : f.weight_files) files.push_back(FileName(path));
  j["weight_files"] = files;
  const std::map<std::string, PartTotals> parts = CountParts(store, c);
  PartTotals total;
  for (const char* name : {"vision", "merger", "text"}) {
    const auto it = parts.find(name);
    if (it == parts.end()) continue;
    const PartTotals& p = it->second;
    j["parts"][name] = {{"tensors", p.tensors},
                        {"parameters", p.parameters},
                        {"bytes", p.bytes},
                        {"dtype", Join(p.dtypes)}};
    total.tensors += p.tensors;
    total.parameters += p.parameters;
    total.bytes += p.bytes;
    total.dtypes.insert(p.dtypes.begin(), p.dtypes.end());
  }
  j["parts"]["total"] = {{"tensors", total.tensors},
                         {"parameters", total.parameters},
                         {"bytes", total.bytes},
                         {"dtype", Join(total.dtypes)}};
  if (c.weight_quant.present()) {
    const WeightQuantization& q = c.weight_quant;
    const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(c);
    int quantized = 0, linear = 0;
    const ExpectedTensor* four_bit = nullptr;  // a bitsandbytes 4-bit weight
    for (const ExpectedTensor& e : expected) {
      if (!IsLinearWeight(e)) continue;
      ++linear;
      const TensorInfo* t = store.Find(e.name);
      quantized += t == nullptr || t->dtype == q.codes;
      if (four_bit == nullptr && t != nullptr && t->dtype == DType::kU8) four_bit = &e;
    }
    std::string scale_per = q.BlocksName();
    if (four_bit != nullptr) {  // the block its quant_state gives: transformers uses one for all
      const Bnb4BitState s = ReadBnb4BitState(store, q, four_bit->name);
      scale_per =
          StrCat("block of ", s.blocksize, " values", s.nested ? " (double-quantized)" : "");
    }
    j["quantized"] = {{"method", q.MethodName()},
                      {"weights", quantized},
                      {"linear_layers", linear},
                      {"codes", q.CodesName()},
                      {"scale_per", scale_per}};
  }
  j["text"] = {{"layers", t.num_layers},
               {"hidden_size", t.hidden_size},
               {"heads", t.num_heads},
               {"kv_heads", t.num_kv_heads},
               {"head_dim", t.head_dim},
               {"intermediate_size", t.intermediate_size},
               {"vocab_size", t.vocab_size},
               {"context_length", t.max_position_embeddings},
               {"rope_theta", t.rope_theta},
               {"mrope_section", t.mrope_section},
               {"mrope_interleaved", t.mrope_interleaved},
               {"tied_embeddings", c.tie_word_embeddings}};
  const int grid = static_cast<int>(std::lround(std::sqrt(v.num_position_embeddings)));
  j["vision"] = {{"blocks", v.depth},
                 {"hidden_size", v.hidden_size},
                 {"heads", v.num_heads},
                 {"intermediate_size", v.intermediate_size},
                 {"patch_size", v.patch_size},
                 {"temporal_patch_size", v.temporal_patch_size},
                 {"spatial_merge_size", v.spatial_merge_size},
                 {"position_grid", grid},
                 {"deepstack_visual_indexes", v.deepstack_visual_indexes},
                 {"out_hidden_size", v.out_hidden_size}};
  j["tokens"] = {{"image", c.image_token_id},
                 {"video", c.video_token_id},
                 {"vision_start", c.vision_start_token_id},
                 {"vision_end", c.vision_end_token_id},
                 {"eos", f.generation.eos_token_ids}};
  const GenerationConfig& g = f.generation;
  j["generation"] = {{"do_sample", g.do_sample},
                     {"temperature", g.temperature},
                     {"top_p", g.top_p},
                     {"top_k", g.top_k},
                     {"repetition_penalty", g.repetition_penalty}};
  j["files"] = {
      {"tokenizer", FileName(f.tokenizer_path)},
      {"tokenizer_config", FileName(f.tokenizer_config_path)},
      {"chat_template", FileName(f.chat_template_path)},
      {"preprocessor_config", FileName(f.preprocessor_config_path)},
      {"generation_config", f.generation_config_path.empty() ? std::string("(absent, defaults)")
                                                             : FileName(f.generation_config_path)}};
  return j;
}

void PrintText(const nlohmann::ordered_json& j) {
  std::printf("model: %s (%s), valid\n", j["model"].get<std::string>().c_str(),
              j["model_type"].get<std::string>().c_str());
  std::string files;
  for (const auto& name : j["weight_files"])
    files += (files.empty() ? "" : ", ") + name.get<std::string>();
  std::printf("weights: %s\n", files.c_str());
  std::printf("  %-32s %8s %16s %16s  %s\n", "part", "tensors", "parameters", "bytes", "dtype");
  for (const char* name : {"vision", "merger", "text", "total"}) {
    if (!j["parts"].contains(name)) continue;
    const auto& p = j["parts"][name];
    std::printf(
        "  %-32s %8s %16s %16s  %s\n", std::string(name) == "total" ? "total" : PartLabel(name),
        Thousands(p["tensors"].get<uint64_t>()).c_str(),
        Thousands(p["parameters"].get<uint64_t>()).c_str(),
        Thousands(p["bytes"].get<uint64_t>()).c_str(), p["dtype"].get<std::string>().c_str());
  }
  if (j.contains("quantized")) {
    const auto& q = j["quantized"];
    std::printf(
        "%s checkpoint: %d of %d Linear weights as %s codes, a scale per %s; decoded "
        "to the format --dtype asks for\n",
        q["method"].get<std::string>().c_str(), q["weights"].get<int>(),
        q["linear_layers"].get<int>(), q["codes"].get<std::string>().c_str(),
        q["scale_per"].get<std::string>().c_str());
  }
  const auto& t = j["text"];
  std::printf(
      "text decoder: %d layers, hidden %d, %d heads / %d KV heads x head_dim %d, MLP %d, "
      "vocab %d, %s embeddings\n",
      t["layers"].get<int>(), t["hidden_size"].get<int>(), t["heads"].get<int>(),
      t["kv_heads"].get<int>(), t["head_dim"].get<int>(), t["intermediate_size"].get<int>(),
      t["vocab_size"].get<int>(), t["tied_embeddings"].get<bool>() ? "tied" : "separate lm_head");
  std::printf("context length: %s tokens (max_position_embeddings)\n",
              Thousands(t["context_length"].get<uint64_t>()).c_str());
  std::printf("rope: theta %.0f, mrope_section %s%s\n", t["rope_theta"].get<double>(),
              List(t["mrope_section"]).c_str(),
              t["mrope_interleaved"].get<bool>() ? " interleaved" : "");
  const auto& v = j["vision"];
  std::printf(
      "vision tower: %d blocks, hidden %d, %d heads, MLP %d, patch %dx%d (x%d frames), merge "
      "%dx%d, position grid %dx%d, deepstack taps %s -> %d\n",
      v["blocks"].get<int>(), v["hidden_size"].get<int>(), v["heads"].get<int>(),
      v["intermediate_size"].get<int>(), v["patch_size"].get<int>(), v["patch_size"].get<int>(),
      v["temporal_patch_size"].get<int>(), v["spatial_merge_size"].get<int>(),
      v["spatial_merge_size"].get<int>(), v["position_grid"].get<int>(),
      v["position_grid"].get<int>(), List(v["deepstack_visual_indexes"]).c_str(),
      v["out_hidden_size"].get<int>());
  const auto& k = j["tokens"];
  std::printf("tokens: image %d, video %d, vision_start %d, vision_end %d, eos %s\n",
              k["image"].get<int>(), k["video"].get<int>(), k["vision_start"].get<int>(),
              k["vision_end"].get<int>(), List(k["eos"]).c_str());
  const auto& g = j["generation"];
  std::printf(
      "generation defaults: do_sample %s, temperature %g, top_p %g, top_k %d, "
      "repetition_penalty %g\n",
      g["do_sample"].get<bool>() ? "true" : "false", g["temperature"].get<double>(),
      g["top_p"].get<double>(), g["top_k"].get<int>(), g["repetition_penalty"].get<double>());
  const auto& f = j["files"];
  std::printf("files: %s, %s, chat template in %s, %s, %s\n",
              f["tokenizer"].get<std::string>().c_str(),
              f["tokenizer_config"].get<std::string>().c_str(),
              f["chat_template"].get<std::string>().c_str(),
              f["preprocessor_config"].get<std::string>().c_str(),
              f["generation_config"].get<std::string>().c_str());
}

}  // namespace

void AddInfoVerb(CLI::App& app) {
  auto model_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* verb =
      app.add_subcommand("info", "Validate a model folder and describe it and this CPU");
  verb->add_option("-m,--model", *model_dir,
                   "model folder (Hugging Face layout), or ORG/NAME in the Hugging Face cache");
  verb->add_flag("--json", *json, "print one JSON object instead of text");
  auto probe = std::make_shared<bool>(false);
  verb->add_flag("--probe", *probe,
                 "also measure memory read bandwidth and the kernel tier's compute peak "
                 "(about half a second)");
  verb->callback([model_dir, json, probe] {
    nlohmann::ordered_json out;
    if (!model_dir->empty()) {
      const CheckedModelFolder checked =
          CheckModelFolder(OnDiskModelFolder(*model_dir, "qvl info"));
      LoadModelSettings(checked.folder);
      out = Describe(checked.folder, checked.store);
    }
    const std::string tier = CpuTierName(ActiveTier());
    BandwidthProbe bandwidth;
    ComputeProbe peak;
    if (*probe) {
      ThreadPool pool(DefaultThreadCount());
      bandwidth = MeasureReadBandwidth(pool);
      peak = MeasureComputePeak(pool);
    }
    if (*json) {
      out["cpu"] = DescribeCpu();
      out["kernel_tier"] = tier;
      if (*probe) {
        out["memory_bandwidth_gb_s"] = bandwidth.gb_per_s;
        out["compute_peak"] = {
            {"unit", peak.unit}, {"int8_tops", peak.int8_tops}, {"bf16_tflops", peak.bf16_tflops}};
      }
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      if (!model_dir->empty()) PrintText(out);
      std::printf("cpu: %s\n", DescribeCpu().c_str());
      std::printf("kernel tier: %s\n", tier.c_str());
      if (*probe) {
        std::printf("memory read bandwidth: %.1f GB/s\n", bandwidth.gb_per_s);
        if (*peak.unit != '\0') {
          std::printf("compute peak: %.2f TOP/s int8, %.2f TFLOP/s bf16 (%s)\n", peak.int8_tops,
                      peak.bf16_tflops, peak.unit);
        }
      }
    }
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
