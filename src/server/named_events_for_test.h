// Server-sent events with names ("event: NAME\ndata: JSON\n\n"), as the Responses and
// Anthropic APIs stream them, split for the tests of their encoders and routes.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace qvl::testing {

struct NamedEvent {
  std::string name;
  nlohmann::json data;
};

// The events of `sse` in order; each must be terminated and well formed, and its name
// must be its payload's type.
inline std::vector<NamedEvent> NamedEvents(const std::string& sse) {
  std::vector<NamedEvent> events;
  size_t start = 0;
  while (start < sse.size()) {
    const size_t end = sse.find("\n\n", start);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated event: " << sse.substr(start);
      break;
    }
    const std::string text = sse.substr(start, end - start);
    const size_t newline = text.find('\n');
    EXPECT_EQ(text.rfind("event: ", 0), 0u) << text;
    EXPECT_EQ(text.compare(newline + 1, 6, "data: "), 0) << text;
    NamedEvent e{text.substr(7, newline - 7), nlohmann::json::parse(text.substr(newline + 7))};
    EXPECT_EQ(e.data["type"], e.name);
    events.push_back(std::move(e));
    start = end + 2;
  }
  return events;
}

inline std::vector<std::string> EventNames(const std::vector<NamedEvent>& events) {
  std::vector<std::string> names;
  for (const NamedEvent& e : events) names.push_back(e.name);
  return names;
}

}  // namespace qvl::testing
