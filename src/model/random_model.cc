#include "model/random_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/bf16.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "model/config.h"
#include "model/model_folder.h"
#include "model/safetensors.h"
#include "model/weights.h"

namespace qvl {
namespace {

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

// splitmix64's output function: a bijective 64-bit mix.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t HashName(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Qwen's -FP8 releases scale each 128 x 128 block of a Linear weight.
constexpr int kFp8Block = 128;

struct TensorPlan {
  uint64_t key;
  float mean;
  float std;
  DType dtype = DType::kBF16;
  float fp8_step = 0;  // kF8E4M3: the value of one code unit (the tensor's block scale)
};

TensorPlan PlanTensor(const ExpectedTensor& t, uint64_t seed) {
  TensorPlan p{Mix64(HashName(t.name) ^ Mix64(seed + kGamma)), 0.0f, 1.0f};
  switch (t.role) {
    case TensorRole::kMatrix:
      p.std = static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.numel() / t.shape[0])));
      break;
    case TensorRole::kEmbedding:
      p.std = static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.shape[1])));
      break;
    case TensorRole::kNormGain:
      p.mean = 1.0f;
      p.std = 0.02f;
      break;
    case TensorRole::kBias:
      p.std = 0.01f;
      break;
  }
  return p;
}

void FillRange(const TensorPlan& p, uint64_t first, int64_t count, uint8_t* dst) {
  const DType dtype = p.dtype;
  for (int64_t i = 0; i < count; ++i) {
    const float v = p.mean + p.std * RandomNormal(p.key, first + static_cast<uint64_t>(i));
    if (dtype == DType::kF8E4M3) {
      dst[i] = F32ToF8E4M3(v / p.fp8_step);
    } else if (dtype == DType::kF32) {
      std::memcpy(dst + 4 * i, &v, 4);
    } else {
      const uint16_t h = dtype == DType::kBF16 ? F32ToBf16(v) : F32ToF16(v);
      std::memcpy(dst + 2 * i, &h, 2);
    }
  }
}

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void MakeDirectories(const std::string& dir) {
  for (size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      Fail(ErrorCode::kIo, "cannot create folder ", prefix, ": ", std::strerror(errno));
    }
    if (end == std::string::npos) break;
  }
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Copies `name` from the first of `sources` holding it; returns false when none does.
bool CopyCompanion(const std::vector<std::string>& sources, const std::string& out_dir,
                   const char* name) {
  for (const std::string& dir : sources) {
    if (IsFile(dir + "/" + name)) {
      WriteFileAtomically(out_dir + "/" + name, ReadFileToString(dir + "/" + name));
      return true;
    }
  }
  return false;
}

std::string StandardGenerationConfig(const ModelConfig& c) {
  std::vector<int32_t> eos = c.eos_token_ids;
  if (c.bos_token_id >= 0 && std::find(eos.begin(), eos.end(), c.bos_token_id) == eos.end()) {
    eos.push_back(c.bos_token_id);
  }
  nlohmann::ordered_json j;
  if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
  if (c.bos_token_id >= 0) j["pad_token_id"] = c.bos_token_id;
  j["do_sample"] = true;
  j["eos_token_id"] = eos;
  j["top_k"] = 20;
  j["top_p"] = 0.8;
  j["repetition_penalty"] = 1.0;
  j["temperature"] = 0.7;
  return j.dump(2) + "\n";
}

std::string StandardPreprocessorConfig(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["size"] = {{"longest_edge", 16777216}, {"shortest_edge", 65536}};
  j["patch_size"] = c.vision.patch_size;
  j["temporal_patch_size"] = c.vision.temporal_patch_size;
  j["merge_size"] = c.vision.spatial_merge_size;
  j["image_mean"] = {0.5, 0.5, 0.5};
  j["image_std"] = {0.5, 0.5, 0.5};
  j["processor_class"] = "Qwen3VLProcessor";
  j["image_processor_type"] = "Qwen2VLImageProcessorFast";
  return j.dump(2) + "\n";
}

// Qwen3-VL-2B-Instruct's video_preprocessor_config.json: its `size` bounds the pixels
// of all sampled frames together.
std::string StandardVideoPreprocessorConfig(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["size"] = {{"longest_edge", 25165824}, {"shortest_edge", 4096}};
  j["patch_size"] = c.vision.patch_size;
  j["temporal_patch_size"] = c.vision.temporal_patch_size;
  j["merge_size"] = c.vision.spatial_merge_size;
  j["image_mean"] = {0.5, 0.5, 0.5};
  j["image_std"] = {0.5, 0.5, 0.5};
  j["fps"] = 2;
  j["min_frames"] = 4;
  j["max_frames"] = 768;
  j["do_sample_frames"] = true;
  j["processor_class"] = "Qwen3VLProcessor";
  j["video_processor_type"] = "Qwen3VLVideoProcessor";
  return j.dump(2) + "\n";
}

void WriteCompanionFiles(const RandomModelOptions& o, const ModelConfig& config) {
  std::vector<std::string> sources;
  if (!o.files_from.empty()) sources.push_back(o.files_from);
  sources.push_back(ParentDir(o.config_path));
  const std::string& out = o.output_dir;
  std::string config_json = ReadFileToString(o.config_path);
  if (o.dtype == DType::kF8E4M3) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(config_json);
    j["quantization_config"] = {{"activation_scheme", "dynamic"},
                                {"fmt", "e4m3"},
                                {"quant_method", "fp8"},
                                {"weight_block_size", {kFp8Block, kFp8Block}}};
    config_json = j.dump(2) + "\n";
  }
  WriteFileAtomically(out + "/config.json", config_json);
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    if (!CopyCompanion(sources, out, name)) {
      Fail(ErrorCode::kNotFound, name,
           sources.size() > 1 ? StrCat(" is in neither ", sources[0], " nor ", sources[1])
                              : StrCat(" is not in ", sources[0]),
           "; name a folder holding the Qwen3-VL tokenizer files");
    }
  }
  CopyCompanion(sources, out, "chat_template.json");
  CopyCompanion(sources, out, "chat_template.jinja");
  if (!CopyCompanion(sources, out, "video_preprocessor_config.json")) {
    WriteFileAtomically(out + "/video_preprocessor_config.json",
                        StandardVideoPreprocessorConfig(config));
  }
  if (!CopyCompanion(sources, out, "generation_config.json")) {
    WriteFileAtomically(out + "/generation_config.json", StandardGenerationConfig(config));
  }
  if (!CopyCompanion(sources, out, "preprocessor_config.json")) {
    WriteFileAtomically(out + "/preprocessor_config.json", StandardPreprocessorConfig(config));
  }
  FindChatTemplatePath(out);
}

}  // namespace

float RandomNormal(uint64_t key, uint64_t index) {
  const uint64_t bits = Mix64(key + (index + 1) * kGamma);
  const int32_t sum = static_cast<int32_t>((bits & 0xffff) + ((bits >> 16) & 0xffff) +
                                           ((bits >> 32) & 0xffff) + (bits >> 48));
  // Four uniforms on [0, 65535]: mean 131070, standard deviation 65536 / sqrt(3).
  constexpr float kScale = 1.7320508f / 65536.0f;
  return static_cast<float>(sum - 131070) * kScale;
}

RandomModelSummary WriteRandomModel(const RandomModelOptions& o, ThreadPool& pool) {
  if (o.dtype != DType::kBF16 && o.dtype != DType::kF16 && o.dtype != DType::kF32 &&
      o.dtype != DType::kF8E4M3) {
    Fail(ErrorCode::kInvalidArgument, "random weights can be BF16, F16, F32 or F8_E4M3, not ",
         DTypeName(o.dtype));
  }
  const ModelConfig config = LoadModelConfig(o.config_path);
  // Copying from a folder that is not there would quietly take the config's folder's
  // files instead.
  struct stat st;
  if (!o.files_from.empty() && (::stat(o.files_from.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    Fail(ErrorCode::kNotFound, o.files_from,
         ": no such folder (to copy the tokenizer and the other companion files from)");
  }
  // Weights are never overwritten: -o naming a real model's folder replaced its
  // checkpoint with random numbers.
  for (const char* name : {"model.safetensors", "model.safetensors.index.json"}) {
    const std::string path = o.output_dir + "/" + name;
    if (::lstat(path.c_str(), &st) == 0) {
      Fail(ErrorCode::kInvalidArgument, path,
           " already exists; make-random never overwrites weights: choose another folder");
    }
  }
  MakeDirectories(o.output_dir);
  WriteCompanionFiles(o, config);

  const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(config);
  std::vector<TensorSpec> specs;
  std::vector<TensorPlan> plans;
  RandomModelSummary summary;
  const bool fp8 = o.dtype == DType::kF8E4M3;
  for (const ExpectedTensor& t : expected) {
    TensorPlan plan = PlanTensor(t, o.seed);
    // An fp8 checkpoint keeps what is not a Linear weight in BF16, as Qwen's do.
    plan.dtype = !fp8 ? o.dtype : IsLinearWeight(t) ? DType::kF8E4M3 : DType::kBF16;
    specs.push_back({t.name, plan.dtype, t.shape});
    summary.parameters += t.numel();
    if (plan.dtype == DType::kF8E4M3) {
      // One scale for every block: the largest value RandomNormal gives maps to 448.
      plan.fp8_step = plan.std * kRandomNormalBound / 448.0f;
      const TensorPlan scale{0, plan.fp8_step, 0.0f, DType::kF32};
      specs.push_back(
          {QuantizedNames(t.name, {.method = WeightQuantization::Method::kFp8}).scales,
           DType::kF32,
           {(t.shape[0] + kFp8Block - 1) / kFp8Block, (t.shape[1] + kFp8Block - 1) / kFp8Block}});
      plans.push_back(plan);
      plans.push_back(scale);
      continue;
    }
    plans.push_back(plan);
  }
  summary.tensors = specs.size();
  const std::string weights = o.output_dir + "/model.safetensors";
  WriteSafetensors(weights, specs,
                   [&](size_t index, size_t offset, uint8_t* dst, size_t nbytes) {
                     const size_t element = DTypeSize(plans[index].dtype);
                     const uint64_t first = offset / element;
                     pool.ParallelFor(static_cast<int64_t>(nbytes / element), int64_t{1} << 16,
                                      [&](int64_t begin, int64_t end, int) {
                                        FillRange(plans[index],
                                                  first + static_cast<uint64_t>(begin), end - begin,
                                                  dst + static_cast<size_t>(begin) * element);
                                      });
                   },
                   {{"format", "pt"}});

  const ModelFolder folder = OpenModelFolder(o.output_dir);
  CheckQwen3VLTensors(TensorStore::OpenFolder(folder.dir), folder.config);
  if (::stat(weights.c_str(), &st) == 0) summary.file_bytes = static_cast<uint64_t>(st.st_size);
  return summary;
}

}  // namespace qvl
