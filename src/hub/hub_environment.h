// Where the Hugging Face hub and its cache are, read from the same environment
// variables huggingface_hub reads, so qvl and Python tools share one cache and one login.
#pragma once

#include <string>

namespace qvl::hub {

inline constexpr const char kDefaultEndpoint[] = "https://huggingface.co";

// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. A leading ~/ is expanded.
std::string HubCacheDir();

// `flag` when non-empty, else $HF_ENDPOINT, else https://huggingface.co; no trailing slash.
// Throws kInvalidArgument, naming --endpoint or HF_ENDPOINT and the fix, unless it starts
// with http:// or https:// (libcurl would take "hf-mirror.com" for plain http).
std::string HubEndpoint(const std::string& flag);

// `flag` when non-empty, else $HF_TOKEN, else $HUGGING_FACE_HUB_TOKEN, else the token file
// written by `hf auth login` ($HF_TOKEN_PATH, else $HF_HOME/token). Empty when none is set.
std::string HubToken(const std::string& flag);

// True when $HF_HUB_OFFLINE (or $TRANSFORMERS_OFFLINE) is 1/true/yes/on.
bool HubOffline();

}  // namespace qvl::hub
