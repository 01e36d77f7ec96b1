// Answers of deterministic requests — greedy, or sampled with a fixed "seed" — shared
// between replicas through the SharedCache, so that a frequent question is computed once
// for the whole deployment. Sampled requests without a seed are never cached: their
// answers are meant to differ.
//
// Key: SHA-256 of the request body's JSON with sorted keys, minus the fields that do not
// change the answer ("stream", "stream_options", "user"), the SHA-256 of every image's
// bytes (an image URL may serve something else tomorrow), and the defaults a request
// may fall back on (the server's answer length, context, image and video budgets; the
// model folder's sampling and video sampling); under the model's key, so other weights
// or numerics never share. Value: the text, the tokens (with
// logprobs when asked), the finish reason and usage, in a value envelope.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "server/update_channel.h"
#include "share/shared_cache.h"

namespace qvl {

// The key, or nullopt when the request's answer is not deterministic, or it asks for
// several choices or for its prompt's logprobs (which a stored answer does not hold).
// `route` tells apart the routes that read the same body with other defaults
// (llama-server's /completion and /v1/completions); "" for the others.
std::optional<std::string> AnswerKey(const SharedCache& cache, std::string_view body,
                                     const GenerationRequest& request, const Engine& engine,
                                     std::string_view route = "");

// On a hit pushes the stored answer into `channel` (a text update, then the final one)
// and returns true; false on a miss or any fault, within the cache's timeout.
bool ReplayAnswer(SharedCache& cache, const std::string& key, UpdateChannel& channel);

// `sink`, which also keeps the answer and, once it ends normally (stop or length),
// stores it in the background. Without a cache or key: `sink` itself.
UpdateSink RecordAnswer(SharedCache* cache, const std::optional<std::string>& key, UpdateSink sink);

}  // namespace qvl
