// The plain question the tests of other servers' fields ask on /v1/chat/completions, and
// the text of its answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server_harness.h"

namespace qvl::testing {

// Greedy, so that the same question gets the same answer.
inline nlohmann::json Question(int max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
          {"max_tokens", max_tokens},
          {"temperature", 0}};
}

inline std::string Content(const HttpResult& r) {
  return r.json["choices"][0]["message"]["content"].get<std::string>();
}

}  // namespace qvl::testing
