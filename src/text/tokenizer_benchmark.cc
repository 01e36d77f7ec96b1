// Tokenizer speed: load time of the real Qwen3 tokenizer.json, Encode / Decode
// throughput on English, Chinese and code, and the pre-tokenizer scanner against PCRE2
// (the measurement behind choosing the scanner).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "text/pcre2_pretokenizer.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace qvl {
namespace {

const std::string kTokenizerPath = QVL_TEST_DATA "/tiny-qwen3vl/model/tokenizer.json";

constexpr const char* kEnglish =
    "The chart in the upper half of the image compares quarterly revenue for four product "
    "lines. Hardware grows steadily from 12.4 million in Q1 to 18.9 million in Q4, while "
    "services stay almost flat at around 7 million. The tallest bar belongs to cloud "
    "subscriptions in the third quarter; its label reads \"21.3M (+38% YoY)\". Below the chart, "
    "a paragraph of small print explains that figures are unaudited, that currency effects "
    "were removed, and that the fiscal year ends on September 30th. A handwritten note in the "
    "margin asks: \"Why did licensing drop in Q2? Check with finance before the board meeting.\" "
    "In the lower right corner there's a photo of a whiteboard covered in arrows, boxes and a "
    "half-erased diagram of a data pipeline: ingest -> clean -> aggregate -> report. Someone "
    "wrote TODAY'S PRIORITIES in capital letters above a numbered list, and the first item, "
    "'ship the v2.1 release', has been crossed out twice.\n\n";

constexpr const char* kChinese =
    "图片上方是一张柱状图，比较了四条产品线的季度收入。硬件收入从第一季度的一千二百四十万稳步增长到"
    "第四季度的一千八百九十万，而服务收入基本持平，保持在七百万左右。最高的柱子属于第三季度的云订阅"
    "，"
    "标签上写着“2130万（同比增长38%）”。图表下方有一段小字说明：数据未经审计，已剔除汇率影响，"
    "财年截止于九月三十日。页边有一行手写的批注：“第二季度授权收入为什么下降？董事会之前请与财务确"
    "认。”"
    "右下角是一张白板的照片，上面画满了箭头和方框，还有一张擦掉了一半的数据流程图：采集、清洗、汇总"
    "、"
    "报告。有人在列表上方用大字写着“今日重点”，第一项“发布二点一版本”被划掉了两次。\n\n";

constexpr const char* kCode =
    "def summarize(rows: list[dict], key: str = \"revenue\") -> dict[str, float]:\n"
    "    \"\"\"Sums `key` per quarter and returns the totals sorted by quarter.\"\"\"\n"
    "    totals: dict[str, float] = {}\n"
    "    for row in rows:\n"
    "        quarter = row.get(\"quarter\", \"Q?\")\n"
    "        totals[quarter] = totals.get(quarter, 0.0) + float(row[key])\n"
    "    return dict(sorted(totals.items()))\n\n"
    "int CountTokens(const std::vector<int32_t>& ids, int32_t pad_id) {\n"
    "  int n = 0;\n"
    "  for (size_t i = 0; i < ids.size(); ++i) {\n"
    "    if (ids[i] != pad_id) ++n;  // padding is not part of the prompt\n"
    "  }\n"
    "  return n;\n"
    "}\n\n";

const Tokenizer& QwenTokenizer() {
  static const Tokenizer* tokenizer = new Tokenizer(Tokenizer::FromFile(kTokenizerPath));
  return *tokenizer;
}

std::string Mixed() { return std::string(kEnglish) + kChinese + kCode; }

void EncodeText(benchmark::State& state, const std::string& text) {
  const Tokenizer& tokenizer = QwenTokenizer();
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<int32_t> ids = tokenizer.Encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_EncodeMixed(benchmark::State& state) { EncodeText(state, Mixed()); }
void BM_EncodeEnglish(benchmark::State& state) { EncodeText(state, kEnglish); }
void BM_EncodeChinese(benchmark::State& state) { EncodeText(state, kChinese); }
void BM_EncodeCode(benchmark::State& state) { EncodeText(state, kCode); }

void BM_Decode(benchmark::State& state) {
  const Tokenizer& tokenizer = QwenTokenizer();
  const std::string text = Mixed();
  const std::vector<int32_t> ids = tokenizer.Encode(text);
  for (auto _ : state) benchmark::DoNotOptimize(tokenizer.Decode(ids, false));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_SplitScanner(benchmark::State& state) {
  const std::string text = Mixed();
  for (auto _ : state) {
    size_t pieces = 0;
    text::ForEachPiece(text, [&](std::string_view) { ++pieces; });
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_SplitPcre2(benchmark::State& state) {
  const std::string text = Mixed();
  const text::Pcre2PreTokenizer pcre2;
  for (auto _ : state) benchmark::DoNotOptimize(pcre2.Split(text).size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) {
    const Tokenizer tokenizer = Tokenizer::FromFile(kTokenizerPath);
    benchmark::DoNotOptimize(tokenizer.vocab_size());
  }
}

BENCHMARK(BM_EncodeMixed);
BENCHMARK(BM_EncodeEnglish);
BENCHMARK(BM_EncodeChinese);
BENCHMARK(BM_EncodeCode);
BENCHMARK(BM_Decode);
BENCHMARK(BM_SplitScanner);
BENCHMARK(BM_SplitPcre2);
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
