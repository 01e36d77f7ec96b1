// The engine updates the encoder tests feed: a piece of answer text with its logprobs,
// a progress report before the first token, and an answer's final update; and the
// server-sent events they read back.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/request.h"

namespace qvl::testing {

// `text` as one token (id 42, logprob -0.25) with two alternatives, the second a token
// that ends inside a UTF-8 character.
inline GenerationUpdate Text(const std::string& text) {
  GenerationUpdate u;
  u.text = text;
  GeneratedToken t;
  t.chosen = {42, text, -0.25f};
  t.top = {{42, text, -0.25f}, {7, "\xe4\xb8", -2.0f}};
  u.tokens.push_back(t);
  return u;
}

// The end of an answer: 12 prompt tokens (8 of them cached), 2 generated, 3 ms prefill.
inline GenerationUpdate Final(FinishReason reason) {
  GenerationUpdate u;
  u.finished = true;
  u.finish_reason = reason;
  u.usage = {12, 2, 8, 0};
  u.timings.prefill_ms = 3;
  return u;
}

// A progress report before the first token: 80 prompt tokens (16 of them cached),
// `processed` in the KV cache, `vision` of the images' encoding done, 12.5 ms in.
inline GenerationUpdate Progress(int64_t processed, double vision) {
  GenerationUpdate u;
  u.progress = PromptProgress{
      .total = 80, .cached = 16, .processed = processed, .vision = vision, .elapsed_ms = 12.5};
  return u;
}

// The JSON payloads of an SSE body's "data: ..." events, "[DONE]" as that string.
inline std::vector<nlohmann::json> Events(const std::string& sse) {
  std::vector<nlohmann::json> events;
  size_t start = 0;
  while (start < sse.size()) {
    const size_t end = sse.find("\n\n", start);
    EXPECT_NE(end, std::string::npos);
    const std::string event = sse.substr(start, end - start);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    const std::string data = event.substr(6);
    events.push_back(data == "[DONE]" ? nlohmann::json("[DONE]") : nlohmann::json::parse(data));
    start = end + 2;
  }
  return events;
}

}  // namespace qvl::testing
