#include "hub/model_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "hub/repo_cache.h"

namespace qvl::hub {
namespace {

const char* const kRequiredFiles[] = {
    kConfigFile,
    "preprocessor_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
};

// Fetched when the repository has them; the engine falls back without them.
const char* const kOptionalFiles[] = {
    "generation_config.json",
    "chat_template.json",
    "chat_template.jinja",
    "video_preprocessor_config.json",
};

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

std::vector<std::string> SelectModelFiles(const std::vector<std::string>& repo_files,
                                          const std::string& repo) {
  const std::set<std::string> present(repo_files.begin(), repo_files.end());
  std::vector<std::string> selected;
  for (const char* name : kRequiredFiles) {
    if (!present.count(name)) {
      Fail(ErrorCode::kNotFound, "model ", repo, " has no ", name,
           "; is it a Qwen3-VL model in Hugging Face format?");
    }
    selected.push_back(name);
  }
  for (const char* name : kOptionalFiles) {
    if (present.count(name)) selected.push_back(name);
  }
  if (present.count(kWeightsFile)) {
    selected.push_back(kWeightsFile);
  } else if (present.count(kWeightsIndexFile)) {
    selected.push_back(kWeightsIndexFile);
  } else {
    Fail(ErrorCode::kNotFound, "model ", repo, " has neither ", kWeightsFile, " nor ",
         kWeightsIndexFile, "; qvl reads safetensors weights only");
  }
  return selected;
}

std::vector<std::string> ReadShardList(const std::string& index_path) {
  std::ifstream in(index_path);
  if (!in) Fail(ErrorCode::kNotFound, "cannot read ", index_path);
  const nlohmann::json index = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object() ||
      index["weight_map"].empty()) {
    Fail(ErrorCode::kCorrupt, index_path, " has no weight_map object");
  }
  std::set<std::string> shards;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string()) {
      Fail(ErrorCode::kCorrupt, index_path, ": weight_map entry ", tensor, " is not a file name");
    }
    ValidateRepoFilename(file.get<std::string>());
    shards.insert(file.get<std::string>());
  }
  return std::vector<std::string>(shards.begin(), shards.end());
}

std::vector<std::string> MissingModelFiles(const std::string& dir) {
  std::vector<std::string> missing;
  for (const char* name : kRequiredFiles) {
    if (!IsFile(dir + "/" + name)) missing.push_back(name);
  }
  if (IsFile(dir + "/" + kWeightsFile)) return missing;
  const std::string index = dir + "/" + kWeightsIndexFile;
  if (!IsFile(index)) {
    missing.push_back(kWeightsFile);
    return missing;
  }
  try {
    for (const std::string& shard : ReadShardList(index)) {
      if (!IsFile(dir + "/" + shard)) missing.push_back(shard);
    }
  } catch (const Error&) {
    missing.push_back(kWeightsIndexFile);
  }
  return missing;
}

}  // namespace qvl::hub
