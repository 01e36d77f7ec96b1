// Turns the -m/--model argument of `qvl serve` and `qvl run` into a model folder: a folder
// path as is, or a hub name ORG/NAME looked up in the Hugging Face cache without touching
// the network, and pulled first when it is not there (unless downloads are off).
#pragma once

#include <string>

#include "hub/model_puller.h"

namespace qvl::hub {

struct ResolveOptions {
  bool allow_download = true;  // false: --no-download (also implied by HF_HUB_OFFLINE=1)
  // What turned downloads off, as the error for a model not in the cache names it.
  std::string downloads_off_by = "--no-download";
  // Revision, endpoint, token, cache folder, jobs and progress of a pull; repo and
  // local_dir are ignored.
  PullOptions pull;
};

// The model folder for `spec`: an existing folder, or ORG/NAME from the cache (pulled
// when missing or incomplete and allowed). Throws kNotFound with the command that fixes it.
std::string ResolveModel(const std::string& spec, const ResolveOptions& options);

// As ResolveModel without the network: the folder when it is on disk already, "" when
// ORG/NAME would have to be pulled first (and downloads are allowed). Throws as
// ResolveModel for everything else (a missing folder, a bad name, downloads off).
std::string ResolveLocalModel(const std::string& spec, const ResolveOptions& options);

// The id clients send as "model" for `spec`: ORG/NAME as given; for a folder, ORG/NAME
// when it is a snapshot of the Hugging Face cache (.../models--ORG--NAME/snapshots/REV),
// else the folder's own name.
std::string ServedModelId(const std::string& spec);

// snapshots/<commit> of repo@revision when refs/<revision> (or the commit itself) leads
// to a complete model folder in `cache_dir`; "" otherwise. Never uses the network.
std::string FindCachedModel(const std::string& cache_dir, const std::string& repo,
                            const std::string& revision);

}  // namespace qvl::hub
