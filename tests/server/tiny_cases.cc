#include "tiny_cases.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/model_folder_for_test.h"

namespace qvl::testing {

namespace {
const std::string kData = QVL_TEST_DATA;
}  // namespace

std::string ModelDir() { return kData + "/tiny-qwen3vl/model"; }

std::string TinyThinkingModel() { return ThinkingModelFolder(ModelDir()); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = buffer << 8 | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (6 - bits)) & 63]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

std::string DataUrl(const std::string& path) {
  const bool png = path.size() > 4 && path.substr(path.size() - 4) == ".png";
  return std::string("data:image/") + (png ? "png" : "jpeg") + ";base64," + Base64(ReadFile(path));
}

TinyCase LoadTinyCase(const std::string& name) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/" + name;
  TinyCase c;
  c.name = name;
  c.request = nlohmann::json::parse(ReadFile(dir + "/request.json"));
  for (auto& message : c.request["messages"]) {
    if (!message["content"].is_array()) continue;
    for (auto& part : message["content"]) {
      if (part.value("type", "") == "image_url") {
        part["image_url"]["url"] = DataUrl(dir + "/" + part["image_url"]["url"].get<std::string>());
      }
      if (part.value("type", "") == "video") {
        for (auto& frame : part["video"]) frame = DataUrl(dir + "/" + frame.get<std::string>());
      }
    }
  }
  const nlohmann::json meta = nlohmann::json::parse(ReadFile(dir + "/meta.json"));
  c.greedy_text = meta["greedy_text"];
  c.prompt_tokens = meta["num_prompt_tokens"];
  const int max_tokens = c.request["max_tokens"];
  if (meta["greedy_first_eos_index"].is_null()) {
    c.completion_tokens = max_tokens;
    c.finish_reason = "length";
  } else {
    // The EOS token is generated and counted, but not shown.
    c.completion_tokens = meta["greedy_first_eos_index"].get<int>() + 1;
    c.finish_reason = "stop";
  }
  return c;
}

std::vector<TinyCase> LoadTinyCases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kData + "/tiny-qwen3vl/cases")) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<TinyCase> cases;
  for (const std::string& name : names) cases.push_back(LoadTinyCase(name));
  return cases;
}

}  // namespace qvl::testing
