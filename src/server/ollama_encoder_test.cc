#include "server/ollama_encoder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "server/encoder_updates_for_test.h"

namespace qvl {
namespace {

using nlohmann::json;
using ::qvl::testing::Final;
using ::qvl::testing::Text;

constexpr char kModel[] = "qwen3-vl:2b";
constexpr char kCall[] =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

OllamaEncoderOptions Chat(bool stream, bool tools = false) {
  return {OllamaApi::kChat, kModel, stream, tools, false};
}
OllamaEncoderOptions Generate(bool stream) {
  return {OllamaApi::kGenerate, kModel, stream, false, false};
}

// Final(reason) with every stage timed; the durations expected in nanoseconds below.
GenerationUpdate Timed(FinishReason reason) {
  GenerationUpdate u = Final(reason);
  u.timings.queue_ms = 1.5;
  u.timings.preprocess_ms = 2.25;
  u.timings.vision_ms = 4;
  u.timings.prefill_ms = 3;
  u.timings.decode_ms = 7.125;
  u.timings.total_ms = 20.5;
  return u;
}

void ExpectCountsAndDurations(const json& final_object) {
  EXPECT_EQ(final_object["total_duration"], 20500000);
  EXPECT_EQ(final_object["load_duration"], 7750000);  // queue + preprocessing + vision
  EXPECT_EQ(final_object["prompt_eval_count"], 12);
  EXPECT_EQ(final_object["prompt_eval_duration"], 3000000);
  EXPECT_EQ(final_object["eval_count"], 2);
  EXPECT_EQ(final_object["eval_duration"], 7125000);
  EXPECT_FALSE(final_object.contains("context"));
}

// "2026-12-02T03:04:05.123456789Z", within a minute of now.
void ExpectCreatedAt(const json& object) {
  ASSERT_TRUE(object.contains("created_at")) << object.dump();
  const std::string text = object["created_at"].get<std::string>();
  static const std::regex kFormat(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z)");
  ASSERT_TRUE(std::regex_match(text, kFormat)) << text;
  std::tm utc{};
  utc.tm_year = std::stoi(text.substr(0, 4)) - 1900;
  utc.tm_mon = std::stoi(text.substr(5, 2)) - 1;
  utc.tm_mday = std::stoi(text.substr(8, 2));
  utc.tm_hour = std::stoi(text.substr(11, 2));
  utc.tm_min = std::stoi(text.substr(14, 2));
  utc.tm_sec = std::stoi(text.substr(17, 2));
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  EXPECT_LE(std::abs(static_cast<long long>(timegm(&utc) - now)), 60) << text;
}

std::string StreamAll(OllamaEncoder& encoder, std::vector<GenerationUpdate> updates) {
  std::string out = encoder.Start();
  EXPECT_EQ(out, "");
  for (GenerationUpdate& u : updates) {
    EXPECT_FALSE(encoder.finished());
    out += encoder.Encode(std::move(u));
  }
  EXPECT_TRUE(encoder.finished());
  return out;
}

// Splits newline-delimited JSON: every line ends with "\n" and parses.
std::vector<json> Lines(const std::string& ndjson) {
  std::vector<json> lines;
  size_t start = 0;
  while (start < ndjson.size()) {
    const size_t end = ndjson.find('\n', start);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated line: " << ndjson.substr(start);
      break;
    }
    lines.push_back(json::parse(ndjson.substr(start, end - start)));
    start = end + 1;
  }
  return lines;
}

// Every line but the last is done:false with the model and a created_at; the last is
// done:true.
void ExpectStreamShape(const std::vector<json>& lines) {
  ASSERT_FALSE(lines.empty());
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i].dump());
    EXPECT_EQ(lines[i]["model"], kModel);
    ExpectCreatedAt(lines[i]);
    EXPECT_EQ(lines[i]["done"], i + 1 == lines.size());
    EXPECT_EQ(lines[i].contains("done_reason"), i + 1 == lines.size());
  }
}

// Not streamed: nothing until the final update, then one JSON object.
json Body(OllamaEncoder& encoder, std::vector<GenerationUpdate> updates) {
  EXPECT_EQ(encoder.Start(), "");
  std::string body;
  for (size_t i = 0; i < updates.size(); ++i) {
    body = encoder.Encode(std::move(updates[i]));
    if (i + 1 < updates.size()) {
      EXPECT_EQ(body, "");
    }
  }
  EXPECT_TRUE(encoder.finished());
  return json::parse(body);
}

TEST(OllamaEncoderTest, ContentTypeIsNdjsonWhenStreamed) {
  OllamaEncoder encoder(Chat(true));
  EXPECT_EQ(encoder.ContentType(true), "application/x-ndjson");
  EXPECT_EQ(encoder.ContentType(false), "application/json");
}

TEST(OllamaEncoderTest, ChatStreamsALinePerPieceThenTheFinalObject) {
  OllamaEncoder encoder(Chat(true));
  const std::vector<json> lines = Lines(
      StreamAll(encoder, {Text("Hel"), Text("lo, "), Text("world"), Timed(FinishReason::kStop)}));
  ExpectStreamShape(lines);
  ASSERT_EQ(lines.size(), 4u);
  std::string answer;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(lines[i]["message"]["role"], "assistant");
    EXPECT_FALSE(lines[i]["message"].contains("tool_calls"));
    EXPECT_FALSE(lines[i].contains("response"));
    answer += lines[i]["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(answer, "Hello, world");
  const json& last = lines.back();
  EXPECT_EQ(last["message"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(last["done_reason"], "stop");
  ExpectCountsAndDurations(last);
  EXPECT_EQ(encoder.summary().usage.completion_tokens, 2);
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kStop);
  EXPECT_EQ(encoder.summary().text, "");
}

TEST(OllamaEncoderTest, GenerateStreamsResponsePieces) {
  OllamaEncoder encoder(Generate(true));
  const std::vector<json> lines = Lines(
      StreamAll(encoder, {Text("A "), Text(""), Text("tree."), Timed(FinishReason::kLength)}));
  ExpectStreamShape(lines);
  ASSERT_EQ(lines.size(), 3u);  // an empty piece makes no line
  EXPECT_EQ(lines[0]["response"], "A ");
  EXPECT_EQ(lines[1]["response"], "tree.");
  for (const json& line : lines) EXPECT_FALSE(line.contains("message"));
  EXPECT_EQ(lines[2]["response"], "");
  EXPECT_EQ(lines[2]["done_reason"], "length");
  ExpectCountsAndDurations(lines[2]);
}

TEST(OllamaEncoderTest, NotStreamedTheFinalObjectHoldsTheWholeAnswer) {
  OllamaEncoder chat(Chat(false));
  const json c = Body(chat, {Text("Hello, "), Text("world"), Timed(FinishReason::kLength)});
  EXPECT_EQ(c["model"], kModel);
  ExpectCreatedAt(c);
  EXPECT_EQ(c["message"], json({{"role", "assistant"}, {"content", "Hello, world"}}));
  EXPECT_EQ(c["done"], true);
  EXPECT_EQ(c["done_reason"], "length");
  ExpectCountsAndDurations(c);

  OllamaEncoder generate(Generate(false));
  const json g = Body(generate, {Text("Hello, "), Text("world"), Timed(FinishReason::kStop)});
  EXPECT_EQ(g["response"], "Hello, world");
  EXPECT_FALSE(g.contains("message"));
  EXPECT_EQ(g["done"], true);
  EXPECT_EQ(g["done_reason"], "stop");
  ExpectCountsAndDurations(g);
}

const json kExpectedCall = {
    {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}};

// A line's piece: "text:<content>" or "call:<tool_calls>".
std::vector<std::string> Pieces(const std::vector<json>& lines) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const json& message = lines[i]["message"];
    if (message.contains("tool_calls")) {
      EXPECT_EQ(message["content"], "");
      pieces.push_back("call:" + message["tool_calls"].dump());
    } else {
      pieces.push_back("text:" + message["content"].get<std::string>());
    }
  }
  return pieces;
}

TEST(OllamaEncoderTest, StreamedToolCallsAreLinesInTheOrderWritten) {
  const std::string answer = std::string("Checking.\n") + kCall + "\n\nIt is sunny.";
  const std::string call = json::array({kExpectedCall}).dump();
  // Whole and in pieces of 5 bytes: the calls sit where the model wrote them.
  for (const size_t step : {answer.size(), size_t{5}}) {
    SCOPED_TRACE(step);
    OllamaEncoder encoder(Chat(true, true));
    std::vector<GenerationUpdate> updates;
    for (size_t i = 0; i < answer.size(); i += step)
      updates.push_back(Text(answer.substr(i, step)));
    updates.push_back(Timed(FinishReason::kStop));
    const std::vector<json> lines = Lines(StreamAll(encoder, std::move(updates)));
    ExpectStreamShape(lines);
    std::string before;
    std::string after;
    bool call_seen = false;
    int calls = 0;
    for (const std::string& piece : Pieces(lines)) {
      if (piece.rfind("call:", 0) == 0) {
        EXPECT_EQ(piece, "call:" + call);
        call_seen = true;
        ++calls;
      } else {
        (call_seen ? after : before) += piece.substr(5);
      }
    }
    EXPECT_EQ(calls, 1);
    // The separator before the call is dropped; the one after it parts the two texts.
    EXPECT_EQ(before, "Checking.");
    EXPECT_EQ(after, "\n\nIt is sunny.");
    EXPECT_FALSE(lines.back()["message"].contains("tool_calls"));
  }
}

TEST(OllamaEncoderTest, NotStreamedToolCallsFollowTheContent) {
  OllamaEncoder encoder(Chat(false, true));
  const std::string answer = std::string("Checking.\n") + kCall + "\n" + kCall + "\n\nIt is sunny.";
  const json r = Body(encoder, {Text(answer), Timed(FinishReason::kStop)});
  EXPECT_EQ(r["message"]["content"], "Checking.\n\nIt is sunny.");
  EXPECT_EQ(r["message"]["tool_calls"], json::array({kExpectedCall, kExpectedCall}));
  EXPECT_TRUE(r["message"]["tool_calls"][0]["function"]["arguments"].is_object());
  EXPECT_EQ(r["done_reason"], "stop");
}

TEST(OllamaEncoderTest, WhitespaceAroundCallsIsNoContent) {
  const std::string answer = std::string("\n") + kCall + "\n" + kCall + "\n\n";
  OllamaEncoder plain(Chat(false, true));
  const json r = Body(plain, {Text(answer), Final(FinishReason::kStop)});
  EXPECT_EQ(r["message"]["content"], "");
  EXPECT_EQ(r["message"]["tool_calls"].size(), 2u);

  OllamaEncoder streamed(Chat(true, true));
  std::vector<GenerationUpdate> updates;
  for (size_t i = 0; i < answer.size(); i += 3) updates.push_back(Text(answer.substr(i, 3)));
  updates.push_back(Final(FinishReason::kStop));
  const std::string call = "call:" + json::array({kExpectedCall}).dump();
  EXPECT_EQ(Pieces(Lines(StreamAll(streamed, std::move(updates)))),
            (std::vector<std::string>{call, call}));

  // With tools, an answer of only whitespace has no content; no tool_calls either.
  OllamaEncoder blank(Chat(false, true));
  const json b = Body(blank, {Text(" \n"), Final(FinishReason::kStop)});
  EXPECT_EQ(b["message"], json({{"role", "assistant"}, {"content", ""}}));
}

TEST(OllamaEncoderTest, ArgumentsAreAlwaysAnObject) {
  OllamaEncoder encoder(Chat(false, true));
  const json r =
      Body(encoder,
           {Text("<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"n\\\": 1}\"}\n</tool_call>"),
            Final(FinishReason::kStop)});
  EXPECT_EQ(r["message"]["tool_calls"][0]["function"]["arguments"], json({{"n", 1}}));

  OllamaEncoder bare(Chat(false, true));
  const json b =
      Body(bare, {Text("<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>"),
                  Final(FinishReason::kStop)});
  EXPECT_EQ(b["message"]["tool_calls"][0]["function"],
            json({{"name", "f"}, {"arguments", json::object()}}));
}

TEST(OllamaEncoderTest, WithoutToolsWhitespaceAndMarkupAreTheAnswer) {
  const std::string answer = std::string("\t ") + kCall + "\n";
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream);
    OllamaEncoder encoder(Chat(stream));
    const std::vector<GenerationUpdate> updates = {Text(answer), Final(FinishReason::kStop)};
    if (stream) {
      const std::vector<json> lines = Lines(StreamAll(encoder, updates));
      ASSERT_EQ(lines.size(), 2u);
      EXPECT_EQ(lines[0]["message"]["content"], answer);
    } else {
      const json r = Body(encoder, updates);
      EXPECT_EQ(r["message"]["content"], answer);
      EXPECT_FALSE(r["message"].contains("tool_calls"));
    }
  }
}

GenerationUpdate Failed() {
  GenerationUpdate u = Final(FinishReason::kError);
  u.error = "engine step failed";
  return u;
}

TEST(OllamaEncoderTest, AnAnswerCutShortEndsWithAnError) {
  OllamaEncoder streamed(Chat(true));
  const std::vector<json> lines = Lines(StreamAll(streamed, {Text("Hi"), Failed()}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["message"]["content"], "Hi");
  EXPECT_EQ(lines[1], json({{"error", "the answer failed: engine step failed"}}));
  EXPECT_EQ(streamed.summary().finish_reason, FinishReason::kError);
  EXPECT_EQ(streamed.summary().error, "engine step failed");

  OllamaEncoder plain(Generate(false));
  EXPECT_EQ(Body(plain, {Text("Hi"), Final(FinishReason::kCancelled)}),
            json({{"error", "the server shut down before the answer was complete"}}));
}

TEST(OllamaEncoderTest, InvalidUtf8IsReplacedNotThrown) {
  OllamaEncoder plain(Chat(false));
  json r;
  ASSERT_NO_THROW(r = Body(plain, {Text("a\xff"), Text("b"), Final(FinishReason::kStop)}));
  EXPECT_EQ(r["message"]["content"],
            "a\xef\xbf\xbd"
            "b");

  OllamaEncoder streamed(Chat(true, true));
  std::string ndjson;
  ASSERT_NO_THROW(ndjson = StreamAll(streamed, {Text("x\xc3"), Final(FinishReason::kStop)}));
  EXPECT_EQ(Lines(ndjson)[0]["message"]["content"], "x\xef\xbf\xbd");

  OllamaEncoder generate(Generate(true));
  ASSERT_NO_THROW(ndjson = StreamAll(generate, {Text("\xe4\xb8"), Final(FinishReason::kStop)}));
  EXPECT_EQ(Lines(ndjson)[0]["response"], "\xef\xbf\xbd");
}

TEST(OllamaEncoderTest, OnlyChoiceZeroCounts) {
  OllamaEncoder encoder(Chat(true));
  GenerationUpdate other = Final(FinishReason::kStop);
  other.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(other)), "");
  EXPECT_FALSE(encoder.finished());
}

// A Thinking model's reasoning (up to "</think>") is message.thinking beside the content:
// lines of their own while streaming, one field of the final object when not.
TEST(OllamaEncoderTest, AThinkingModelsReasoningIsThinking) {
  const OllamaEncoderOptions options{.api = OllamaApi::kChat,
                                     .model = kModel,
                                     .stream = true,
                                     .parse_tool_calls = true,
                                     .split_reasoning = true};
  OllamaEncoder streamed(options);
  const std::vector<json> lines = Lines(
      StreamAll(streamed, {Text("Need the weather.\n</th"), Text(std::string("ink>\n\n") + kCall),
                           Timed(FinishReason::kStop)}));
  ExpectStreamShape(lines);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["message"],
            json({{"role", "assistant"}, {"content", ""}, {"thinking", "Need the weather."}}));
  EXPECT_EQ(lines[1]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_FALSE(lines[1]["message"].contains("thinking"));

  OllamaEncoderOptions whole = options;
  whole.stream = false;
  whole.parse_tool_calls = false;
  OllamaEncoder encoder(whole);
  const json body = Body(encoder, {Text("Blue light "), Text("scatters.\n</think>\n\nBlue."),
                                   Timed(FinishReason::kStop)});
  EXPECT_EQ(
      body["message"],
      json({{"role", "assistant"}, {"content", "Blue."}, {"thinking", "Blue light scatters."}}));

  OllamaEncoderOptions generate = whole;
  generate.api = OllamaApi::kGenerate;
  OllamaEncoder generated(generate);
  const json reply = Body(generated, {Text("r</think>a"), Timed(FinishReason::kStop)});
  EXPECT_EQ(reply["response"], "a");
  EXPECT_EQ(reply["thinking"], "r");
}

// Ollama's logprobs: each token's entry in the first object after it (a piece that makes
// no line passes its entry on), all of them in the whole answer's object; none unasked.
TEST(OllamaEncoderTest, LogprobsGoWithTheirTokens) {
  OllamaEncoderOptions streamed = Generate(true);
  streamed.logprobs = true;
  OllamaEncoder encoder(streamed);
  const std::vector<json> lines = Lines(
      StreamAll(encoder, {Text("A "), Text(""), Text("tree."), Timed(FinishReason::kLength)}));
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_EQ(lines[0]["logprobs"].size(), 1u);
  const json& a = lines[0]["logprobs"][0];
  EXPECT_EQ(a["token"], "A ");
  EXPECT_EQ(a["logprob"], -0.25);
  EXPECT_EQ(a["bytes"], json({65, 32}));
  ASSERT_EQ(a["top_logprobs"].size(), 2u);
  EXPECT_EQ(a["top_logprobs"][1]["bytes"], json({0xe4, 0xb8}));
  ASSERT_EQ(lines[1]["logprobs"].size(), 2u);
  EXPECT_EQ(lines[1]["logprobs"][0]["token"], "");
  EXPECT_EQ(lines[1]["logprobs"][1]["token"], "tree.");
  EXPECT_FALSE(lines[2].contains("logprobs"));

  OllamaEncoderOptions whole = Chat(false);
  whole.logprobs = true;
  OllamaEncoder chat(whole);
  const json c = Body(chat, {Text("Hel"), Text("lo"), Timed(FinishReason::kStop)});
  EXPECT_EQ(c["message"]["content"], "Hello");
  ASSERT_EQ(c["logprobs"].size(), 2u);
  EXPECT_EQ(c["logprobs"][1]["token"], "lo");
  OllamaEncoder unasked(Chat(false));
  EXPECT_FALSE(Body(unasked, {Text("Hi"), Timed(FinishReason::kStop)}).contains("logprobs"));
}

}  // namespace
}  // namespace qvl
