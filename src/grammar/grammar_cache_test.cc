#include "grammar/grammar_cache.h"

#include <gtest/gtest.h>

#include "base/field_error.h"

namespace qvl {
namespace {

std::shared_ptr<const Grammar> Compile(const char* schema, int* calls) {
  ++*calls;
  return CompileJsonSchema(nlohmann::ordered_json::parse(schema));
}

TEST(GrammarCacheTest, ReusesGrammarsByKeyAndDropsTheLeastRecentlyUsed) {
  GrammarCache cache(2);
  int calls = 0;
  const auto a = cache.Get("a", [&] { return Compile(R"({"type": "string"})", &calls); });
  EXPECT_EQ(cache.Get("a", [&] { return Compile(R"({"type": "string"})", &calls); }), a);
  EXPECT_EQ(calls, 1);
  const auto b = cache.Get("b", [&] { return Compile(R"({"type": "integer"})", &calls); });
  EXPECT_NE(a, b);
  cache.Get("a", [&] { return Compile(R"({"type": "string"})", &calls); });  // a is recent
  cache.Get("c", [&] { return Compile(R"({"type": "null"})", &calls); });    // drops b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.Get("a", [&] { return Compile(R"({"type": "string"})", &calls); }), a);
  cache.Get("b", [&] { return Compile(R"({"type": "integer"})", &calls); });
  EXPECT_EQ(calls, 4);
}

TEST(GrammarCacheTest, ErrorsPropagateAndAreNotCached) {
  GrammarCache cache(4);
  int calls = 0;
  for (int i = 0; i < 2; ++i) {
    EXPECT_THROW(cache.Get("bad", [&] { return Compile(R"({"type": "nope"})", &calls); }),
                 FieldError);
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace qvl
