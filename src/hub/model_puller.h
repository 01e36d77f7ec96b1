// `qvl pull`: downloads the files qvl needs of a model repository into the Hugging Face
// cache (shared with huggingface_hub) or a plain folder. Parallel and resumable, retried
// on network errors, every file checked against the hub's sha256 / git blob id before it
// is used. A pull that stops half-way leaves no folder that looks complete: snapshot
// symlinks (config.json last) and refs/<revision> are written only once all files verify.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "hub/hub_api.h"
#include "hub/model_files.h"
#include "hub/transfer_progress.h"

namespace qvl::hub {

struct PullOptions {
  std::string repo = kDefaultModelRepo;
  std::string revision = "main";
  std::string endpoint;  // "" = $HF_ENDPOINT, else https://huggingface.co
  std::string token;     // "" = $HF_TOKEN, else the `hf auth login` token file
  // How the running verb lets the user set a token, as error messages name it.
  std::string token_hint = "HF_TOKEN";
  std::string cache_dir;  // "" = HubCacheDir()
  std::string local_dir;  // non-empty: plain files in this folder instead of the cache
  int jobs = 8;           // parallel connections
  // Files at least twice this size are fetched as several ranges at once.
  uint64_t min_segment_bytes = 64ull << 20;
  NetworkSettings network;
  RetryPolicy retry;
  ProgressStyle progress = DefaultProgressStyle();
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by Ctrl-C) to stop early
};

struct PullResult {
  std::string path;  // the model folder: snapshots/<commit> or local_dir
  std::string commit;
  int files = 0;             // files in the model folder
  int files_downloaded = 0;  // fetched over the network in this run
  uint64_t bytes_downloaded = 0;
};

PullResult PullModel(const PullOptions& options);

}  // namespace qvl::hub
