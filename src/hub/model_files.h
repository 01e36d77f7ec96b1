// Which files of a Qwen3-VL repository qvl needs, and whether a folder has them all.
#pragma once

#include <string>
#include <vector>

namespace qvl::hub {

inline constexpr char kDefaultModelRepo[] = "Qwen/Qwen3-VL-2B-Instruct";
inline constexpr char kConfigFile[] = "config.json";
inline constexpr char kWeightsFile[] = "model.safetensors";
inline constexpr char kWeightsIndexFile[] = "model.safetensors.index.json";

// The files to fetch from a repository listing: the configs, tokenizer and chat template
// that exist, and model.safetensors or else model.safetensors.index.json (whose shards
// come from ReadShardList). Throws kNotFound naming `repo` when a required file is absent.
std::vector<std::string> SelectModelFiles(const std::vector<std::string>& repo_files,
                                          const std::string& repo);

// The shard files an index's weight_map points to, sorted and without duplicates.
std::vector<std::string> ReadShardList(const std::string& index_path);

// Files `dir` lacks to be a complete model folder (required configs, tokenizer and every
// weight shard); empty when complete. Optional files (chat template, generation config)
// are not checked.
std::vector<std::string> MissingModelFiles(const std::string& dir);

}  // namespace qvl::hub
