// Writes a complete Qwen3-VL model folder with random weights for a given config.json:
// the tensor names, shapes and file layout of the real checkpoint, so speed and memory
// can be measured at full size without the real weights.
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.h"
#include "base/thread_pool.h"

namespace qvl {

struct RandomModelOptions {
  std::string config_path;  // config.json describing the model
  std::string output_dir;   // created when missing
  // Folder to copy tokenizer.json, tokenizer_config.json, the chat template and the
  // preprocessor / generation configs from; files it lacks are taken from the folder of
  // config_path, and generation / preprocessor configs are written with the standard
  // Qwen3-VL values when neither folder has them.
  std::string files_from;
  uint64_t seed = 0;
  // kBF16, kF16, kF32, or kF8E4M3: an fp8 checkpoint as Qwen's -FP8 releases are (Linear
  // weights in F8_E4M3 with a scale per 128 x 128 block, the rest BF16).
  DType dtype = DType::kBF16;
};

struct RandomModelSummary {
  size_t tensors = 0;
  int64_t parameters = 0;
  uint64_t file_bytes = 0;  // model.safetensors
};

// Values are a deterministic function of (seed, tensor name, element index):
// approximately normal, matrices with std 1/sqrt(fan_in), embeddings 1/sqrt(width),
// norm gains 1 + N(0, 0.02^2), biases N(0, 0.01^2), which keeps activations finite.
// The result is checked with the regular loader before returning. Throws, before writing
// anything, Error(kInvalidArgument) naming the file when output_dir holds weights already
// and Error(kNotFound) when files_from is not a folder.
RandomModelSummary WriteRandomModel(const RandomModelOptions& options, ThreadPool& pool);

// The random value generator on its own: a counter-based hash turned into an
// approximately standard normal number (sum of four uniforms, |x| < kRandomNormalBound).
float RandomNormal(uint64_t key, uint64_t index);
constexpr float kRandomNormalBound = 3.47f;  // 2 * sqrt(3), rounded up

}  // namespace qvl
