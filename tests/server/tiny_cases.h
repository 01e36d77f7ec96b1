// The tiny model's fixture requests (tests/data/tiny-qwen3vl/cases) as a client sends
// them: image paths replaced by data: URLs, with the golden answer from meta.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace qvl::testing {

struct TinyCase {
  std::string name;  // "02_one_image_jpeg"
  nlohmann::json request;
  std::string greedy_text;  // the answer up to the first EOS
  int completion_tokens = 0;
  std::string finish_reason;  // "stop" when EOS came within max_tokens, else "length"
  int prompt_tokens = 0;
};

std::string ModelDir();
// A copy of the tiny model with the Qwen3-VL Thinking chat template, in a new folder.
std::string TinyThinkingModel();
std::string ReadFile(const std::string& path);
std::string Base64(const std::string& bytes);
// "data:image/png;base64,..." of a file, the media type from its extension.
std::string DataUrl(const std::string& path);

TinyCase LoadTinyCase(const std::string& name);
std::vector<TinyCase> LoadTinyCases();

}  // namespace qvl::testing
