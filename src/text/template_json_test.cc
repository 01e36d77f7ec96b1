#include "text/template_json.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

// Expected strings are Python's json.dumps(value, ensure_ascii=False).
TEST(TemplateJsonTest, WritesObjectsLikePythonJsonDumps) {
  const auto value = nlohmann::ordered_json::parse(
      R"({"b": 1, "a": [1, 2.5, null, true, false, "x\"y\\\n\t\u0001é"], "c": {}})");
  EXPECT_EQ(TemplateJson(value),
            "{\"b\": 1, \"a\": [1, 2.5, null, true, false, \"x\\\"y\\\\\\n\\t\\u0001é\"], "
            "\"c\": {}}");
}

TEST(TemplateJsonTest, WritesNumbersLikePythonRepr) {
  const auto value =
      nlohmann::ordered_json::parse("[1e16, 1.5e-07, 0.1, 100.0, 1e300, -0.0, 123456789012345678]");
  EXPECT_EQ(TemplateJson(value), "[1e+16, 1.5e-07, 0.1, 100.0, 1e+300, -0.0, 123456789012345678]");
}

TEST(TemplateJsonTest, KeepsTheClientsKeyOrder) {
  const auto value = nlohmann::ordered_json::parse(
      R"({"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}})");
  EXPECT_EQ(TemplateJson(value),
            R"({"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}})");
}

}  // namespace
}  // namespace qvl
