#include "server/anthropic_encoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/encoder_updates_for_test.h"
#include "server/named_events_for_test.h"

namespace qvl {
namespace {

using nlohmann::json;
using ::qvl::testing::EventNames;
using ::qvl::testing::Final;
using ::qvl::testing::NamedEvent;
using ::qvl::testing::NamedEvents;
using ::qvl::testing::Progress;
using ::qvl::testing::Text;

AnthropicIdentity Identity() { return {"msg_1", "qwen3-vl"}; }

constexpr char kCall[] =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

// Final(kStop) ended by the stop string `stop`.
GenerationUpdate StoppedAt(const std::string& stop) {
  GenerationUpdate u = Final(FinishReason::kStop);
  u.stop = stop;
  return u;
}

GenerationUpdate Failed() {
  GenerationUpdate u = Final(FinishReason::kError);
  u.error = "engine step failed";
  return u;
}

// Final(...)'s counts: 12 prompt tokens, 8 of them from the prefix cache, 2 generated.
const json kUsage = {{"input_tokens", 4},
                     {"cache_creation_input_tokens", 0},
                     {"cache_read_input_tokens", 8},
                     {"output_tokens", 2}};

// Builds the Message from the events the way the anthropic SDKs' MessageStream does
// (message_start's message is the snapshot, content_block_start pushes its block, deltas
// append to the block at their index, input_json_delta's JSON becomes the input,
// message_delta sets the stop and the usage) up to message_stop, checking on the way what
// the SDKs need: a ping right after message_start, every delta's block exists and is of
// the delta's kind, blocks are stopped in order before the next starts, nothing after
// message_stop.
json Fold(const std::vector<NamedEvent>& events) {
  json snapshot;
  std::vector<std::string> partial_json;
  bool block_open = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string& name = events[i].name;
    const json& e = events[i].data;
    SCOPED_TRACE(e.dump());
    if (i == 0) {
      EXPECT_EQ(name, "message_start");
      snapshot = e["message"];
      continue;
    }
    if (i == 1) {
      EXPECT_EQ(name, "ping");
      continue;
    }
    if (name == "message_delta") {
      EXPECT_FALSE(block_open);
      snapshot["stop_reason"] = e["delta"]["stop_reason"];
      snapshot["stop_sequence"] = e["delta"]["stop_sequence"];
      for (const auto& [key, value] : e["usage"].items()) snapshot["usage"][key] = value;
      continue;
    }
    if (name == "message_stop") {
      EXPECT_EQ(i + 1, events.size()) << "events after message_stop";
      return snapshot;
    }
    const size_t index = e["index"].get<size_t>();
    if (name == "content_block_start") {
      EXPECT_FALSE(block_open);
      EXPECT_EQ(index, snapshot["content"].size());
      snapshot["content"].push_back(e["content_block"]);
      partial_json.emplace_back();
      block_open = true;
      continue;
    }
    EXPECT_TRUE(block_open);
    EXPECT_EQ(index + 1, snapshot["content"].size());
    if (index >= snapshot["content"].size()) return snapshot;
    json& block = snapshot["content"][index];
    if (name == "content_block_stop") {
      block_open = false;
      continue;
    }
    EXPECT_EQ(name, "content_block_delta");
    const json& delta = e["delta"];
    if (delta["type"] == "text_delta") {
      EXPECT_EQ(block["type"], "text");
      block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
    } else if (delta["type"] == "thinking_delta") {
      EXPECT_EQ(block["type"], "thinking");
      block["thinking"] =
          block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
    } else if (delta["type"] == "signature_delta") {
      EXPECT_EQ(block["type"], "thinking");
      block["signature"] = delta["signature"];
    } else if (delta["type"] == "input_json_delta") {
      EXPECT_EQ(block["type"], "tool_use");
      partial_json[index] += delta["partial_json"].get<std::string>();
      block["input"] = json::parse(partial_json[index]);
    } else {
      ADD_FAILURE() << "unexpected delta";
    }
  }
  ADD_FAILURE() << "no message_stop";
  return snapshot;
}

std::string StreamAll(AnthropicEncoder& encoder, const std::vector<GenerationUpdate>& updates) {
  std::string sse = encoder.Start();
  for (GenerationUpdate u : updates) {
    EXPECT_FALSE(encoder.finished());
    sse += encoder.Encode(std::move(u));
  }
  EXPECT_TRUE(encoder.finished());
  return sse;
}

json Body(AnthropicEncoder& encoder, const std::vector<GenerationUpdate>& updates) {
  EXPECT_EQ(encoder.Start(), "");
  std::string last;
  for (GenerationUpdate u : updates) {
    EXPECT_EQ(last, "") << "a body before the final update";
    last = encoder.Encode(std::move(u));
  }
  EXPECT_TRUE(encoder.finished());
  return json::parse(last);
}

// The Message of a whole answer and of its stream (as the SDK builds it), which must
// agree but for the tool_use ids, each its own; the stream's timings come in
// message_delta and are left out of the fold.
std::vector<json> BothWays(const AnthropicEncoderOptions& options,
                           const std::vector<GenerationUpdate>& updates) {
  AnthropicEncoderOptions whole_options = options;
  whole_options.stream = false;
  AnthropicEncoder whole(Identity(), whole_options);
  json body = Body(whole, updates);
  AnthropicEncoderOptions stream_options = options;
  stream_options.stream = true;
  AnthropicEncoder streamed(Identity(), stream_options);
  json folded = Fold(NamedEvents(StreamAll(streamed, updates)));
  EXPECT_EQ(body["timings"]["prefill_ms"], 3.0);
  body.erase("timings");
  json without_ids = body;
  for (json* message : {&without_ids, &folded}) {
    for (json& block : (*message)["content"]) {
      if (block["type"] == "tool_use") block.erase("id");
    }
  }
  EXPECT_EQ(folded, without_ids);
  return {body, folded};
}

TEST(AnthropicEncoderTest, NonStreamedAnswerIsOneMessage) {
  AnthropicEncoder encoder(Identity(), {});
  json m = Body(encoder, {Text("Hel"), Text("lo"), Final(FinishReason::kStop)});
  EXPECT_EQ(m["timings"]["prefill_ms"], 3.0);
  EXPECT_EQ(m["timings"]["images"], json::array());
  m.erase("timings");
  EXPECT_EQ(m, (json{{"id", "msg_1"},
                     {"type", "message"},
                     {"role", "assistant"},
                     {"model", "qwen3-vl"},
                     {"content", json::array({{{"type", "text"}, {"text", "Hello"}}})},
                     {"stop_reason", "end_turn"},
                     {"stop_sequence", nullptr},
                     {"usage", kUsage}}));
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kStop);
  EXPECT_EQ(encoder.summary().usage.completion_tokens, 2);
  EXPECT_EQ(encoder.summary().text, "");
  EXPECT_EQ(encoder.Encode(Text("late")), "");
}

// message_start comes with the first progress report, which has the prompt's size:
// Progress(...) is 80 prompt tokens, 16 of them cached.
TEST(AnthropicEncoderTest, StreamsTheEventsThatBuildTheMessage) {
  AnthropicEncoder encoder(Identity(), {.stream = true});
  EXPECT_EQ(encoder.Start(), "");
  const std::vector<NamedEvent> start = NamedEvents(encoder.Encode(Progress(16, 0.5)));
  EXPECT_EQ(encoder.Encode(Progress(48, 1.0)), "");
  ASSERT_EQ(EventNames(start), (std::vector<std::string>{"message_start", "ping"}));
  EXPECT_EQ(start[0].data, (json{{"type", "message_start"},
                                 {"message",
                                  {{"id", "msg_1"},
                                   {"type", "message"},
                                   {"role", "assistant"},
                                   {"model", "qwen3-vl"},
                                   {"content", json::array()},
                                   {"stop_reason", nullptr},
                                   {"stop_sequence", nullptr},
                                   {"usage",
                                    {{"input_tokens", 64},
                                     {"cache_creation_input_tokens", 0},
                                     {"cache_read_input_tokens", 16},
                                     {"output_tokens", 0}}}}}}));
  EXPECT_EQ(start[1].data, (json{{"type", "ping"}}));
  std::string sse = encoder.Encode(Text("Hel"));
  sse += encoder.Encode(Text("lo"));
  EXPECT_FALSE(encoder.finished());
  sse += encoder.Encode(Final(FinishReason::kStop));
  EXPECT_TRUE(encoder.finished());
  const std::vector<NamedEvent> e = NamedEvents(sse);
  ASSERT_EQ(EventNames(e), (std::vector<std::string>{"content_block_start", "content_block_delta",
                                                     "content_block_delta", "content_block_stop",
                                                     "message_delta", "message_stop"}));
  EXPECT_EQ(e[0].data, (json{{"type", "content_block_start"},
                             {"index", 0},
                             {"content_block", {{"type", "text"}, {"text", ""}}}}));
  EXPECT_EQ(e[1].data, (json{{"type", "content_block_delta"},
                             {"index", 0},
                             {"delta", {{"type", "text_delta"}, {"text", "Hel"}}}}));
  EXPECT_EQ(e[2].data["delta"]["text"], "lo");
  EXPECT_EQ(e[3].data, (json{{"type", "content_block_stop"}, {"index", 0}}));
  json delta = e[4].data;
  EXPECT_EQ(delta["timings"]["prefill_ms"], 3.0);
  delta.erase("timings");
  EXPECT_EQ(delta, (json{{"type", "message_delta"},
                         {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                         {"usage", kUsage}}));
  EXPECT_EQ(e[5].data, (json{{"type", "message_stop"}}));
  EXPECT_EQ(encoder.summary().usage.cached_tokens, 8);
}

// Without a progress report (an answer replayed from the shared cache, an engine failure
// before the request started) the events wait for the final update's counts.
TEST(AnthropicEncoderTest, WithoutProgressMessageStartWaitsForTheCounts) {
  AnthropicEncoder encoder(Identity(), {.stream = true});
  EXPECT_EQ(encoder.Start(), "");
  EXPECT_EQ(encoder.Encode(Text("Hel")), "");
  EXPECT_EQ(encoder.Encode(Text("lo")), "");
  const std::vector<NamedEvent> e = NamedEvents(encoder.Encode(Final(FinishReason::kStop)));
  ASSERT_EQ(EventNames(e),
            (std::vector<std::string>{"message_start", "ping", "content_block_start",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  json usage = kUsage;
  usage["output_tokens"] = 0;
  EXPECT_EQ(e[0].data["message"]["usage"], usage);
  EXPECT_EQ(e[6].data["usage"], kUsage);

  AnthropicEncoder failed(Identity(), {.stream = true});
  EXPECT_EQ(EventNames(NamedEvents(failed.Encode(Failed()))),
            (std::vector<std::string>{"message_start", "ping", "error"}));
}

TEST(AnthropicEncoderTest, AStopStringIsTheStopSequence) {
  for (const json& m : BothWays({}, {Text("1, 2, 3"), StoppedAt("4")})) {
    EXPECT_EQ(m["stop_reason"], "stop_sequence");
    EXPECT_EQ(m["stop_sequence"], "4");
    EXPECT_EQ(m["content"], json::array({{{"type", "text"}, {"text", "1, 2, 3"}}}));
  }
}

TEST(AnthropicEncoderTest, ReachingTheTokenLimitIsMaxTokens) {
  for (const json& m : BothWays({}, {Text("Once upon"), Final(FinishReason::kLength)})) {
    EXPECT_EQ(m["stop_reason"], "max_tokens");
    EXPECT_EQ(m["stop_sequence"], nullptr);
    EXPECT_EQ(m["content"][0]["text"], "Once upon");
    EXPECT_EQ(m["usage"], kUsage);
  }
}

TEST(AnthropicEncoderTest, ToolCallsAreToolUseBlocksInTheOrderWritten) {
  const std::string answer = std::string("Checking.\n") + kCall + "\n\nIt is sunny.";
  const json expected_content =
      json::array({{{"type", "text"}, {"text", "Checking."}},
                   {{"type", "tool_use"}, {"name", "get_weather"}, {"input", {{"city", "Paris"}}}},
                   {{"type", "text"}, {"text", "It is sunny."}}});
  std::vector<GenerationUpdate> pieces;
  for (size_t i = 0; i < answer.size(); i += 5) pieces.push_back(Text(answer.substr(i, 5)));
  pieces.push_back(Final(FinishReason::kStop));
  // All in one update or in pieces: the order follows the text.
  for (const std::vector<GenerationUpdate>& updates :
       {std::vector<GenerationUpdate>{Text(answer), Final(FinishReason::kStop)}, pieces}) {
    const std::vector<json> both = BothWays({.parse_tool_calls = true}, updates);
    const json& body = both[0];
    ASSERT_EQ(body["content"].size(), 3u) << body.dump();
    const std::string id = body["content"][1]["id"];
    EXPECT_EQ(id.rfind("toolu_", 0), 0u) << id;
    EXPECT_EQ(id.size(), 30u);
    for (json m : both) {
      m["content"][1].erase("id");
      EXPECT_EQ(m["content"], expected_content);
      EXPECT_EQ(m["stop_reason"], "tool_use");
    }
  }

  AnthropicEncoder streamed(Identity(), {.stream = true, .parse_tool_calls = true});
  const std::vector<NamedEvent> e = NamedEvents(StreamAll(streamed, pieces));
  std::vector<json> call_events;
  for (const NamedEvent& event : e) {
    if (event.data.value("index", -1) == 1) call_events.push_back(event.data);
  }
  ASSERT_EQ(call_events.size(), 3u);
  const json& block = call_events[0]["content_block"];
  EXPECT_EQ(block["type"], "tool_use");
  EXPECT_EQ(block["id"].get<std::string>().rfind("toolu_", 0), 0u);
  EXPECT_EQ(block["name"], "get_weather");
  EXPECT_EQ(block["input"], json::object());
  EXPECT_EQ(
      call_events[1],
      (json{{"type", "content_block_delta"},
            {"index", 1},
            {"delta", {{"type", "input_json_delta"}, {"partial_json", R"({"city":"Paris"})"}}}}));
  EXPECT_EQ(call_events[2], (json{{"type", "content_block_stop"}, {"index", 1}}));
  EXPECT_EQ(e.back().name, "message_stop");
}

TEST(AnthropicEncoderTest, TwoCallsHaveTheirOwnIds) {
  const std::string answer = std::string(kCall) + "\n" + kCall;
  const json body = BothWays({.parse_tool_calls = true}, {Text(answer), StoppedAt("</s>")})[0];
  ASSERT_EQ(body["content"].size(), 2u) << body.dump();
  EXPECT_NE(body["content"][0]["id"], body["content"][1]["id"]);
  // A call is what the client must act on, whatever ended the answer after it.
  EXPECT_EQ(body["stop_reason"], "tool_use");
  EXPECT_EQ(body["stop_sequence"], "</s>");
}

TEST(AnthropicEncoderTest, WhitespaceMakesNoTextBlock) {
  const std::string answer = std::string("\n") + kCall + "\n" + kCall + "\n\n";
  for (const json& m :
       BothWays({.parse_tool_calls = true}, {Text(answer), Final(FinishReason::kStop)})) {
    ASSERT_EQ(m["content"].size(), 2u) << m.dump();
    EXPECT_EQ(m["content"][0]["type"], "tool_use");
    EXPECT_EQ(m["content"][1]["type"], "tool_use");
  }
  // With tools or without, an answer of only whitespace has no blocks at all.
  for (const bool tools : {false, true}) {
    SCOPED_TRACE(tools);
    for (const json& m : BothWays({.parse_tool_calls = tools},
                                  {Text(" \n"), Text("\t"), Final(FinishReason::kStop)})) {
      EXPECT_EQ(m["content"], json::array());
      EXPECT_EQ(m["stop_reason"], "end_turn");
    }
  }
}

TEST(AnthropicEncoderTest, WithoutToolsTheTextKeepsItsWhitespace) {
  for (const json& m : BothWays({}, {Text("\n "), Text("Hi"), Text(" \n"), Text("there\n"),
                                     Final(FinishReason::kLength)})) {
    EXPECT_EQ(m["content"], json::array({{{"type", "text"}, {"text", "\n Hi \nthere\n"}}}));
  }
}

TEST(AnthropicEncoderTest, AThinkingModelsReasoningIsAThinkingBlockFirst) {
  GenerationUpdate last = Final(FinishReason::kStop);
  last.usage.reasoning_tokens = 1;
  const std::vector<GenerationUpdate> updates = {Text("Blue light scatters.\n</th"),
                                                 Text("ink>\n\nBlue."), last};
  for (const json& m : BothWays({.split_reasoning = true}, updates)) {
    EXPECT_EQ(m["content"],
              json::array(
                  {{{"type", "thinking"}, {"thinking", "Blue light scatters."}, {"signature", ""}},
                   {{"type", "text"}, {"text", "Blue."}}}));
    EXPECT_EQ(m["stop_reason"], "end_turn");
    EXPECT_EQ(m["usage"]["output_tokens"], 2);
  }
  AnthropicEncoder streamed(Identity(), {.stream = true, .split_reasoning = true});
  const std::vector<NamedEvent> e = NamedEvents(StreamAll(streamed, updates));
  ASSERT_EQ(EventNames(e),
            (std::vector<std::string>{
                "message_start", "ping", "content_block_start", "content_block_delta",
                "content_block_delta", "content_block_stop", "content_block_start",
                "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(e[2].data["content_block"],
            (json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}));
  EXPECT_EQ(e[3].data["delta"],
            (json{{"type", "thinking_delta"}, {"thinking", "Blue light scatters."}}));
  EXPECT_EQ(e[4].data, (json{{"type", "content_block_delta"},
                             {"index", 0},
                             {"delta", {{"type", "signature_delta"}, {"signature", ""}}}}));
  EXPECT_EQ(e[6].data["index"], 1);
  EXPECT_EQ(e[7].data["delta"], (json{{"type", "text_delta"}, {"text", "Blue."}}));
}

TEST(AnthropicEncoderTest, AThinkingModelCutOffInItsReasoning) {
  for (const json& m : BothWays({.parse_tool_calls = true, .split_reasoning = true},
                                {Text("Still thinking"), Final(FinishReason::kLength)})) {
    EXPECT_EQ(
        m["content"],
        json::array({{{"type", "thinking"}, {"thinking", "Still thinking"}, {"signature", ""}}}));
    EXPECT_EQ(m["stop_reason"], "max_tokens");
  }
}

TEST(AnthropicEncoderTest, AThinkingModelsCallFollowsItsReasoning) {
  const std::string answer = std::string("Need weather.</think>\n\n") + kCall;
  for (json m : BothWays({.parse_tool_calls = true, .split_reasoning = true},
                         {Text(answer), Final(FinishReason::kStop)})) {
    ASSERT_EQ(m["content"].size(), 2u) << m.dump();
    EXPECT_EQ(m["content"][0]["thinking"], "Need weather.");
    EXPECT_EQ(m["content"][1]["type"], "tool_use");
    EXPECT_EQ(m["stop_reason"], "tool_use");
  }
}

// The model may write the arguments as a string holding JSON; arguments that are no
// object give an empty input, as an input is always an object.
TEST(AnthropicEncoderTest, TheInputIsAlwaysAnObject) {
  const std::string as_string =
      "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}\n</tool_call>";
  const std::string as_array = "<tool_call>\n{\"name\": \"g\", \"arguments\": [1]}\n</tool_call>";
  for (const json& m : BothWays({.parse_tool_calls = true},
                                {Text(as_string + as_array), Final(FinishReason::kStop)})) {
    ASSERT_EQ(m["content"].size(), 2u) << m.dump();
    EXPECT_EQ(m["content"][0]["input"], (json{{"a", 1}}));
    EXPECT_EQ(m["content"][1]["input"], json::object());
  }
}

TEST(AnthropicEncoderTest, AFailedAnswerIsAnError) {
  AnthropicEncoder whole(Identity(), {});
  EXPECT_EQ(
      Body(whole, {Text("Hel"), Failed()}),
      (json{{"type", "error"},
            {"error",
             {{"type", "api_error"}, {"message", "the answer failed: engine step failed"}}}}));
  EXPECT_EQ(whole.summary().finish_reason, FinishReason::kError);
  EXPECT_EQ(whole.summary().error, "engine step failed");

  AnthropicEncoder streamed(Identity(), {.stream = true, .parse_tool_calls = true});
  const std::vector<NamedEvent> e =
      NamedEvents(StreamAll(streamed, {Text("Hel"), Final(FinishReason::kCancelled)}));
  // The block stays open: nothing comes after the error.
  ASSERT_EQ(EventNames(e), (std::vector<std::string>{"message_start", "ping", "content_block_start",
                                                     "content_block_delta", "error"}));
  EXPECT_EQ(e[4].data,
            (json{{"type", "error"},
                  {"error",
                   {{"type", "overloaded_error"},
                    {"message", "the server shut down before the answer was complete"}}}}));
  EXPECT_EQ(streamed.summary().finish_reason, FinishReason::kCancelled);
}

TEST(AnthropicEncoderTest, AnEngineThatCannotServeIsOverloaded) {
  GenerationUpdate u = Failed();
  u.error_code = ErrorCode::kUnavailable;
  AnthropicEncoder encoder(Identity(), {});
  EXPECT_EQ(Body(encoder, {u})["error"]["type"], "overloaded_error");
}

TEST(AnthropicEncoderTest, OnlyChoiceZeroCounts) {
  AnthropicEncoder encoder(Identity(), {.stream = true});
  GenerationUpdate text = Text("other");
  text.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(text)), "");
  GenerationUpdate other = Final(FinishReason::kStop);
  other.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(other)), "");
  EXPECT_FALSE(encoder.finished());
  const json m = Fold(NamedEvents(StreamAll(encoder, {Text("mine"), Final(FinishReason::kStop)})));
  EXPECT_EQ(m["content"], json::array({{{"type", "text"}, {"text", "mine"}}}));
}

TEST(AnthropicEncoderTest, InvalidUtf8IsReplacedNotThrown) {
  std::vector<json> both;
  ASSERT_NO_THROW(both = BothWays({.parse_tool_calls = true},
                                  {Text("a\xff"), Text("b\xc3"), Final(FinishReason::kStop)}));
  for (const json& m : both) {
    EXPECT_EQ(m["content"][0]["text"],
              "a\xef\xbf\xbd"
              "b\xef\xbf\xbd");
  }
}

}  // namespace
}  // namespace qvl
