// Constrained decoding speed on the real Qwen vocabulary (151,936 rows): the cost of one
// step (FillNextTokenMask + Accept) while replaying a valid answer token by token, for a
// receipt-like schema and for json_object. "Cold" compiles a fresh grammar per replay (a
// new schema: every state is met for the first time); "warm" reuses one grammar (the same
// schema again: its masks are cached). Reported per step: median and max in
// microseconds of thread CPU time; "tight" replays with tokens_left equal to the bytes the
// answer has left.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "grammar/gbnf_grammar.h"
#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/token_table.h"
#include "text/test_tokenizer.h"
#include "text/tokenizer.h"

namespace qvl {
namespace {

constexpr int64_t kVocabRows = 151936;

// Per-step times are thread CPU time: the machine is shared, and wall time would charge
// a step for the time other processes held the core.
double ThreadMicros() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

const Tokenizer& QwenTokenizer() { return QwenTokenizerForTest(); }

std::shared_ptr<const TokenTable> QwenTokens() {
  static const std::shared_ptr<const TokenTable> table = [] {
    const int32_t eos[] = {151645, 151643};
    return BuildTokenTable(QwenTokenizer(), kVocabRows, eos);
  }();
  return table;
}

constexpr const char* kReceiptSchema = R"({
  "type": "object",
  "properties": {
    "store": {"type": "string"},
    "address": {"type": "string"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
    "items": {"type": "array", "minItems": 1, "items": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "maxLength": 60},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 999},
        "unit_price": {"type": "number", "minimum": 0},
        "total": {"type": "number", "minimum": 0}
      },
      "required": ["name", "quantity", "unit_price", "total"],
      "additionalProperties": false}},
    "subtotal": {"type": "number", "minimum": 0},
    "tax": {"type": "number", "minimum": 0},
    "total": {"type": "number", "minimum": 0},
    "payment": {"enum": ["cash", "card", "mobile"]},
    "notes": {"type": ["string", "null"]}
  },
  "required": ["store", "date", "items", "total", "payment"],
  "additionalProperties": false})";

constexpr const char* kReceipt =
    R"json({"store": "Green Valley Market", "address": "1428 Elm Street, Springfield", "date": "2024-03-15", "time": "14:32", "items": [{"name": "Organic bananas (1 kg)",
   "quantity" : 2, "unit_price" : 1.99, "total" : 3.98
}, {"name": "Whole milk 2L", "quantity": 1, "unit_price": 2.49, "total": 2.49}, {"name": "Sourdough bread", "quantity": 1, "unit_price": 4.25, "total": 4.25}, {"name": "Free-range eggs, dozen", "quantity": 1, "unit_price": 3.79, "total": 3.79}, {"name": "Cheddar cheese 200 g", "quantity": 2, "unit_price": 3.15, "total": 6.3}], "subtotal": 20.81, "tax": 1.67, "total": 22.48, "payment": "card", "notes": "Thank you for shopping with us! Returns accepted within 30 days with receipt."
})json";

constexpr const char* kFreeObject = R"json({
  "title": "Quarterly revenue by product line",
  "unit": "million USD",
  "series": [
    {"name": "Hardware", "values": [12.4, 14.1, 16.0, 18.9], "trend": "up"},
    {"name": "Services", "values": [7.1, 6.9, 7.0, 7.2], "trend": "flat"},
    {"name": "Cloud subscriptions", "values": [15.2, 17.8, 21.3, 20.6], "trend": "up", "note": "label reads \"21.3M (+38% YoY)\""}
  ],
  "footnote": "Figures are unaudited; currency effects removed. Fiscal year ends September 30.",
  "handwritten": {"text": "Why did licensing drop in Q2?", "position": [812, 77], "legible": true}
})json";

using Compile = std::function<std::shared_ptr<const Grammar>()>;

Compile Schema(const char* schema) {
  return [schema] {
    return CompileJsonSchema(
        nlohmann::ordered_json::parse(schema != nullptr ? schema : R"({"type": "object"})"));
  };
}

void Replay(benchmark::State& state, const Compile& compile, const std::string& document, bool cold,
            bool tight) {
  const std::shared_ptr<const TokenTable> tokens = QwenTokens();
  const std::vector<int32_t> ids = QwenTokenizer().Encode(document);
  std::vector<size_t> bytes_left(ids.size());
  for (size_t i = ids.size(), total = 0; i-- > 0;) {
    total += tokens->Bytes(ids[i]).size();
    bytes_left[i] = total;
  }
  std::shared_ptr<const Grammar> grammar = compile();
  std::vector<uint32_t> mask(tokens->mask_words());
  if (!cold) {  // one replay to fill the caches
    GrammarMatcher matcher(grammar, tokens);
    for (int32_t id : ids) {
      matcher.FillNextTokenMask(mask, 4096);
      matcher.Accept(id);
    }
  }
  std::vector<double> steps;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      grammar = compile();
      state.ResumeTiming();
    }
    GrammarMatcher matcher(grammar, tokens);
    for (size_t i = 0; i < ids.size(); ++i) {
      const double start = ThreadMicros();
      // Tight: no more tokens than the answer has bytes left, so that the shortest
      // completion rule is at work on every step.
      matcher.FillNextTokenMask(mask, tight ? static_cast<int64_t>(bytes_left[i]) : 4096);
      const bool ok = (mask[ids[i] >> 5] >> (ids[i] & 31) & 1) && matcher.Accept(ids[i]);
      steps.push_back(ThreadMicros() - start);
      if (!ok) {
        state.SkipWithError("the replayed document left the grammar");
        return;
      }
    }
    benchmark::DoNotOptimize(matcher.IsComplete());
  }
  std::sort(steps.begin(), steps.end());
  state.counters["steps"] = static_cast<double>(ids.size());
  state.counters["median_us"] = steps[steps.size() / 2];
  state.counters["p90_us"] = steps[steps.size() * 9 / 10];
  state.counters["max_us"] = steps.back();
}

void BM_ReceiptCold(benchmark::State& s) {
  Replay(s, Schema(kReceiptSchema), kReceipt, true, false);
}
void BM_ReceiptWarm(benchmark::State& s) {
  Replay(s, Schema(kReceiptSchema), kReceipt, false, false);
}
void BM_ReceiptColdTight(benchmark::State& s) {
  Replay(s, Schema(kReceiptSchema), kReceipt, true, true);
}
void BM_JsonObjectCold(benchmark::State& s) {
  Replay(s, Schema(nullptr), kFreeObject, true, false);
}
void BM_JsonObjectWarm(benchmark::State& s) {
  Replay(s, Schema(nullptr), kFreeObject, false, false);
}
void BM_JsonObjectColdTight(benchmark::State& s) {
  Replay(s, Schema(nullptr), kFreeObject, true, true);
}
BENCHMARK(BM_ReceiptCold)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_ReceiptWarm)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_ReceiptColdTight)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_JsonObjectCold)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_JsonObjectWarm)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_JsonObjectColdTight)->Unit(benchmark::kMillisecond)->Iterations(5);

// guided_regex, cold: a pattern of the kind users send, and groups that may all be empty
// repeated range(0) times (every copy is expanded before each byte, and each run of
// letters read leads to a state never met before).
void BM_RegexIdCold(benchmark::State& s) {
  Replay(
      s, [] { return CompileRegex("[A-Z]{2}[0-9]{6}( [a-z]{1,64}){1,20}"); },
      "AB123456 the quick brown fox jumps over the lazy dog", true, false);
}
void BM_RegexEmptyGroupsCold(benchmark::State& s) {
  const std::string pattern = StrCat("(a?b?c?d?e?f?g?h?){", s.range(0), "}z");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "abcdefgh";
  Replay(
      s, [&] { return CompileRegex(pattern); }, text + "z", true, false);
}
BENCHMARK(BM_RegexIdCold)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_RegexEmptyGroupsCold)->Arg(58)->Unit(benchmark::kMillisecond)->Iterations(1);

// One mask inside a string of a grammar never used before: a pass over the whole trie
// that keeps almost every token, transitions computed on the way.
void BM_FirstMaskInsideAString(benchmark::State& state) {
  const std::shared_ptr<const TokenTable> tokens = QwenTokens();
  std::vector<uint32_t> mask(tokens->mask_words());
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(R"({"type": "string"})");
  for (auto _ : state) {
    state.PauseTiming();
    GrammarMatcher matcher(CompileJsonSchema(schema), tokens);
    matcher.AcceptBytes("\"");
    state.ResumeTiming();
    matcher.FillNextTokenMask(mask, 4096);
  }
}
BENCHMARK(BM_FirstMaskInsideAString)->Unit(benchmark::kMicrosecond);

void BM_BuildTokenTable(benchmark::State& state) {
  const int32_t eos[] = {151645, 151643};
  for (auto _ : state) benchmark::DoNotOptimize(BuildTokenTable(QwenTokenizer(), kVocabRows, eos));
}
BENCHMARK(BM_BuildTokenTable)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_CompileReceiptSchema(benchmark::State& state) {
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kReceiptSchema);
  for (auto _ : state) benchmark::DoNotOptimize(CompileJsonSchema(schema));
}
BENCHMARK(BM_CompileReceiptSchema)->Unit(benchmark::kMicrosecond);

// A GBNF grammar of 200 rules, about the size of a large hand-written one: each rule has
// literals, classes (one beyond ASCII), repetitions and references to the next rule.
void BM_CompileGbnf200Rules(benchmark::State& state) {
  constexpr int kRules = 200;
  std::string text = "root ::= r0 (\",\" ws r0)*\nws ::= [ \\t\\n]*\n";
  for (int i = 0; i < kRules; ++i) {
    const std::string next = i + 1 < kRules ? StrCat("r", i + 1) : "\"end\"";
    text += StrCat("r", i, " ::= \"k", i, "\" ws \":\" ws (", next,
                   " | [a-z0-9_]{1,8} | \"-\"? [0-9]+ (\".\" [0-9]+)?) | \"[\" ws ", next,
                   "* \"]\" | [^\\x00-\\x1F\"]+  # rule ", i, "\n");
  }
  for (auto _ : state) benchmark::DoNotOptimize(CompileGbnf(text, "grammar"));
}
BENCHMARK(BM_CompileGbnf200Rules)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
