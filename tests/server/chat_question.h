// The plain question the tests of other servers' fields ask on /v1/chat/completions, and
// the text of its answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// The question with `fields` added, refused with a 400 naming `param` with `message`.
struct Refusal {
  nlohmann::json fields;
  std::string param;
  std::string message;
};

inline void ExpectRefused(HttpResult (*chat)(const nlohmann::json&),
                          const std::vector<Refusal>& refusals) {
  for (const auto& [fields, param, message] : refusals) {
    nlohmann::json request = Question(8);
    request.update(fields);
    const HttpResult r = chat(request);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json["error"]["param"], param) << r.body;
    EXPECT_EQ(r.json["error"]["message"], message);
  }
}

}  // namespace qvl::testing
