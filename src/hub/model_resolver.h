// Turns the -m/--model argument of `qvl serve` and `qvl run` into a model folder: a folder
// path as is, or a hub name ORG/NAME looked up in the Hugging Face cache without touching
// the network, and pulled first when it is not there (unless downloads are off).
#pragma once

#include <string>

#include "hub/model_puller.h"

namespace qvl::hub {

struct ResolveOptions {
  bool allow_download = true;  // false: --no-download (also implied by HF_HUB_OFFLINE=1)
  // Revision, endpoint, token, cache folder, jobs and progress of a pull; repo and
  // local_dir are ignored.
  PullOptions pull;
};

// The model folder for `spec`: an existing folder, or ORG/NAME from the cache (pulled
// when missing or incomplete and allowed). Throws kNotFound with the command that fixes it.
std::string ResolveModel(const std::string& spec, const ResolveOptions& options);

// snapshots/<commit> of repo@revision when refs/<revision> (or the commit itself) leads
// to a complete model folder in `cache_dir`; "" otherwise. Never uses the network.
std::string FindCachedModel(const std::string& cache_dir, const std::string& repo,
                            const std::string& revision);

}  // namespace qvl::hub
