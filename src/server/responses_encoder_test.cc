#include "server/responses_encoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/encoder_updates_for_test.h"
#include "server/named_events_for_test.h"

namespace qvl {
namespace {

using nlohmann::json;

json Echo() {
  return {{"instructions", "Be brief."},
          {"max_output_tokens", 64},
          {"temperature", 0.5},
          {"top_p", 1.0},
          {"top_logprobs", 2},
          {"tools", json::array()},
          {"tool_choice", "auto"},
          {"parallel_tool_calls", true},
          {"text", {{"format", {{"type", "text"}}}}},
          {"truncation", "disabled"},
          {"metadata", {{"k", "v"}}},
          {"store", false},
          {"user", "u1"},
          {"reasoning", {{"effort", nullptr}}},
          {"previous_response_id", nullptr}};
}

ResponsesIdentity Identity() { return {"resp_1", 1700000000, "qwen3-vl", Echo()}; }

using ::qvl::testing::EventNames;
using ::qvl::testing::Final;
using ::qvl::testing::NamedEvent;
using ::qvl::testing::NamedEvents;
using ::qvl::testing::Text;

GenerationUpdate Failed() {
  GenerationUpdate u = Final(FinishReason::kError);
  u.error = "engine step failed";
  return u;
}

bool IsTerminal(const std::string& name) {
  return name == "response.completed" || name == "response.incomplete" || name == "response.failed";
}

// One kind of an item's parts (reasoning summaries, reasoning content or message content)
// and the events that build them: <parts>.added and .done, <texts>.delta and .done.
struct PartEvents {
  const char* list;  // the item's array of parts, which events index by <list>_index
  const char* type;  // each part's type
  const char* parts;
  const char* texts;
  bool logprobs;  // deltas carry logprobs that the text's done event repeats
};
constexpr PartEvents kSummaryParts = {"summary", "summary_text", "response.reasoning_summary_part",
                                      "response.reasoning_summary_text", false};
constexpr PartEvents kReasoningParts = {"content", "reasoning_text", "response.content_part",
                                        "response.reasoning_text", false};
constexpr PartEvents kMessageParts = {"content", "output_text", "response.content_part",
                                      "response.output_text", true};

// Applies the event `e` named `name`, one of `kind`'s, to `item` as Fold does; false when
// the part it names is missing (a failure already reported).
bool FoldPart(const PartEvents& kind, const std::string& name, const json& e, json& item) {
  const std::string list = kind.list, parts_events = kind.parts, texts_events = kind.texts;
  const size_t index = e[list + "_index"].get<size_t>();
  json& parts = item[kind.list];
  if (name == parts_events + ".added") {
    EXPECT_EQ(index, parts.size());
    parts.push_back(e["part"]);
    return true;
  }
  if (index >= parts.size()) {
    ADD_FAILURE() << "missing " << kind.type << " at index " << index << " for " << name;
    return false;
  }
  json& part = parts[index];
  EXPECT_EQ(part["type"], kind.type);
  if (name == texts_events + ".delta") {
    part["text"] = part["text"].get<std::string>() + e["delta"].get<std::string>();
    if (kind.logprobs) {
      for (const json& entry : e["logprobs"]) part["logprobs"].push_back(entry);
    }
  } else if (name == texts_events + ".done") {
    EXPECT_EQ(part["text"], e["text"]);
    if (kind.logprobs) {
      EXPECT_EQ(part["logprobs"], e["logprobs"]);
    }
  } else if (name == parts_events + ".done") {
    EXPECT_EQ(part, e["part"]);
    part = e["part"];
  } else {
    ADD_FAILURE() << "unexpected event " << name;
  }
  return true;
}

// Builds the response from the events the way the openai SDK's ResponseStream does
// (lib/responses/ResponseAccumulator: the snapshot starts as response.created's response,
// items are pushed by output_item.added and replaced by output_item.done, deltas append)
// up to the terminal event, and returns that snapshot. On the way it checks what the SDK
// needs (every event's item exists at its output_index, with that item_id) and that each
// done event says what the deltas built: texts, delta logprobs, arguments, whole items.
json Fold(const std::vector<NamedEvent>& events) {
  json snapshot;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string& name = events[i].name;
    const json& e = events[i].data;
    EXPECT_EQ(e["sequence_number"], i) << name;
    if (i == 0) {
      EXPECT_EQ(name, "response.created");
      snapshot = e["response"];
      continue;
    }
    if (IsTerminal(name)) {
      EXPECT_EQ(i + 1, events.size()) << "events after " << name;
      return snapshot;
    }
    if (name == "response.in_progress") {
      snapshot = e["response"];
      continue;
    }
    // The SDK passes on events it does not know; qvl's build nothing.
    if (name.rfind("qvl.", 0) == 0) continue;
    const size_t index = e["output_index"].get<size_t>();
    if (name == "response.output_item.added") {
      EXPECT_EQ(index, snapshot["output"].size());
      EXPECT_EQ(e["item"]["status"], "in_progress");
      snapshot["output"].push_back(e["item"]);
      continue;
    }
    if (index >= snapshot["output"].size()) {
      ADD_FAILURE() << "missing output at index " << index << " for " << name;
      return snapshot;
    }
    json& item = snapshot["output"][index];
    if (name == "response.output_item.done") {
      json built = item;
      built["status"] = e["item"]["status"];
      // A reasoning item streamed as its summary brings its content whole here (the
      // reasoning is streamed once); the content is that summary's text.
      if (item["type"] == "reasoning" && !item["summary"].empty() && item["content"].empty()) {
        built["content"] = json::array({{{"type", "reasoning_text"}, {"text", ""}}});
        for (const json& part : item["summary"]) {
          built["content"][0]["text"] =
              built["content"][0]["text"].get<std::string>() + part["text"].get<std::string>();
        }
      }
      EXPECT_EQ(built, e["item"]);
      item = e["item"];
      continue;
    }
    EXPECT_EQ(e["item_id"], item["id"]) << name;
    if (name == "response.function_call_arguments.delta") {
      item["arguments"] = item["arguments"].get<std::string>() + e["delta"].get<std::string>();
      continue;
    }
    if (name == "response.function_call_arguments.done") {
      EXPECT_EQ(item["arguments"], e["arguments"]);
      EXPECT_EQ(item["name"], e["name"]);
      continue;
    }
    if (name.rfind("response.reasoning_summary_", 0) == 0) {
      EXPECT_EQ(item["type"], "reasoning") << name;
      if (!FoldPart(kSummaryParts, name, e, item)) return snapshot;
      continue;
    }
    if (item["type"] == "reasoning") {
      if (!FoldPart(kReasoningParts, name, e, item)) return snapshot;
      continue;
    }
    EXPECT_EQ(item["type"], "message") << name;
    if (!FoldPart(kMessageParts, name, e, item)) return snapshot;
  }
  ADD_FAILURE() << "no terminal event";
  return snapshot;
}

// The stream's terminal response, after checking that the SDK would build the same output.
json Streamed(const std::vector<NamedEvent>& events) {
  if (events.empty()) return nullptr;
  const json built = Fold(events);
  const json& terminal = events.back().data["response"];
  EXPECT_EQ(built["output"], terminal["output"]);
  return terminal;
}

std::string StreamAll(ResponsesEncoder& encoder, const std::vector<GenerationUpdate>& updates) {
  std::string sse = encoder.Start();
  for (GenerationUpdate u : updates) sse += encoder.Encode(std::move(u));
  return sse;
}

json Body(ResponsesEncoder& encoder, const std::vector<GenerationUpdate>& updates) {
  EXPECT_EQ(encoder.Start(), "");
  std::string last;
  for (GenerationUpdate u : updates) {
    EXPECT_EQ(last, "") << "a body before the final update";
    last = encoder.Encode(std::move(u));
  }
  EXPECT_TRUE(encoder.finished());
  return json::parse(last);
}

void ExpectEchoed(const json& response) {
  const json echo = Echo();
  for (const auto& [key, value] : echo.items()) EXPECT_EQ(response[key], value) << key;
}

TEST(ResponsesEncoderTest, NonStreamedAnswerIsOneCompletedResponse) {
  ResponsesEncoder encoder(Identity(), {});
  const json r = Body(encoder, {Text("Hel"), Text("lo"), Final(FinishReason::kStop)});
  EXPECT_EQ(r["id"], "resp_1");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["created_at"], 1700000000);
  EXPECT_EQ(r["model"], "qwen3-vl");
  EXPECT_EQ(r["status"], "completed");
  ASSERT_TRUE(r["completed_at"].is_number_integer());
  EXPECT_GE(r["completed_at"].get<int64_t>(), 1700000000);
  EXPECT_TRUE(r["error"].is_null());
  EXPECT_TRUE(r["incomplete_details"].is_null());
  ASSERT_EQ(r["output"].size(), 1u);
  const json& message = r["output"][0];
  EXPECT_EQ(message["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(message["id"].get<std::string>().size(), 28u);
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["status"], "completed");
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], (json::array({{{"type", "output_text"},
                                               {"text", "Hello"},
                                               {"annotations", json::array()},
                                               {"logprobs", json::array()}}})));
  EXPECT_EQ(r["usage"], (json{{"input_tokens", 12},
                              {"input_tokens_details", {{"cached_tokens", 8}}},
                              {"output_tokens", 2},
                              {"output_tokens_details", {{"reasoning_tokens", 0}}},
                              {"total_tokens", 14}}));
  EXPECT_EQ(r["timings"]["prefill_ms"], 3.0);
  ExpectEchoed(r);
  EXPECT_EQ(encoder.summary().usage.completion_tokens, 2);
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kStop);
  EXPECT_EQ(encoder.Encode(Text("late")), "");
}

TEST(ResponsesEncoderTest, ReachingTheTokenLimitIsIncomplete) {
  ResponsesEncoder plain(Identity(), {});
  const json r = Body(plain, {Text("Hel"), Final(FinishReason::kLength)});
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"], (json{{"reason", "max_output_tokens"}}));
  EXPECT_TRUE(r["completed_at"].is_null());
  EXPECT_TRUE(r["error"].is_null());
  EXPECT_EQ(r["output"][0]["status"], "incomplete");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Hel");

  ResponsesEncoder streamed(Identity(), {.stream = true});
  const std::vector<NamedEvent> e =
      NamedEvents(StreamAll(streamed, {Text("Hel"), Final(FinishReason::kLength)}));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.back().name, "response.incomplete");
  const json terminal = Streamed(e);
  EXPECT_EQ(terminal["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(terminal["output"][0]["status"], "incomplete");
  EXPECT_EQ(terminal["usage"]["output_tokens"], 2);
}

TEST(ResponsesEncoderTest, AFailedAnswerKeepsItsOutputAndSaysWhy) {
  ResponsesEncoder plain(Identity(), {});
  const json r = Body(plain, {Text("Hel"), Failed()});
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"],
            (json{{"code", "server_error"}, {"message", "the answer failed: engine step failed"}}));
  EXPECT_TRUE(r["completed_at"].is_null());
  EXPECT_TRUE(r["incomplete_details"].is_null());
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Hel");
  EXPECT_EQ(r["usage"]["input_tokens"], 12);
  EXPECT_EQ(plain.summary().finish_reason, FinishReason::kError);
  EXPECT_EQ(plain.summary().error, "engine step failed");

  ResponsesEncoder streamed(Identity(), {.stream = true});
  const std::vector<NamedEvent> e =
      NamedEvents(StreamAll(streamed, {Text("Hel"), Final(FinishReason::kCancelled)}));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.back().name, "response.failed");
  const json terminal = Streamed(e);
  EXPECT_EQ(terminal["status"], "failed");
  EXPECT_EQ(terminal["error"]["code"], "server_error");
  EXPECT_EQ(terminal["error"]["message"], "the server shut down before the answer was complete");
  EXPECT_EQ(terminal["output"][0]["content"][0]["text"], "Hel");
  // No top-level "error": the SDK's stream would throw on it.
  for (const NamedEvent& event : e) EXPECT_FALSE(event.data.contains("error")) << event.name;
}

TEST(ResponsesEncoderTest, StreamsTheEventsThatBuildTheResponse) {
  ResponsesEncoder encoder(Identity(), {.stream = true, .logprobs = true});
  const std::string start = encoder.Start();
  const std::vector<NamedEvent> opening = NamedEvents(start);
  ASSERT_EQ(EventNames(opening),
            (std::vector<std::string>{"response.created", "response.in_progress"}));
  for (const NamedEvent& e : opening) {
    EXPECT_EQ(e.data["response"]["status"], "in_progress");
    EXPECT_EQ(e.data["response"]["output"], json::array());
    EXPECT_TRUE(e.data["response"]["usage"].is_null());
    EXPECT_TRUE(e.data["response"]["completed_at"].is_null());
    EXPECT_FALSE(e.data["response"].contains("timings"));
    ExpectEchoed(e.data["response"]);
  }
  std::string sse = start;
  sse += encoder.Encode(Text("Hel"));
  sse += encoder.Encode(Text("lo"));
  sse += encoder.Encode(Text(" \n"));
  EXPECT_FALSE(encoder.finished());
  sse += encoder.Encode(Final(FinishReason::kStop));
  EXPECT_TRUE(encoder.finished());
  const std::vector<NamedEvent> e = NamedEvents(sse);
  EXPECT_EQ(
      EventNames(e),
      (std::vector<std::string>{
          "response.created", "response.in_progress", "response.output_item.added",
          "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
          "response.output_text.delta", "response.output_text.done", "response.content_part.done",
          "response.output_item.done", "response.completed"}));
  const json terminal = Streamed(e);
  ASSERT_EQ(e.size(), 11u);
  std::string deltas;
  for (const NamedEvent& event : e) {
    if (event.name == "response.output_text.delta") {
      deltas += event.data["delta"];
      EXPECT_EQ(event.data["output_index"], 0);
      EXPECT_EQ(event.data["content_index"], 0);
      EXPECT_EQ(event.data["logprobs"].size(), 1u);
    }
  }
  EXPECT_EQ(deltas, "Hello \n");
  EXPECT_EQ(e[7].data["text"], "Hello \n");
  EXPECT_EQ(e[2].data["item"]["content"], json::array());
  EXPECT_EQ(e[3].data["part"]["text"], "");
  const std::string id = e[2].data["item"]["id"];
  EXPECT_EQ(id.rfind("msg_", 0), 0u);
  for (size_t i = 3; i < 9; ++i) EXPECT_EQ(e[i].data["item_id"], id) << e[i].name;
  EXPECT_EQ(e[9].data["item"]["id"], id);
  EXPECT_EQ(e[9].data["item"]["status"], "completed");
  EXPECT_EQ(terminal["status"], "completed");
  EXPECT_TRUE(terminal["completed_at"].is_number_integer());
  EXPECT_EQ(terminal["usage"]["total_tokens"], 14);
  EXPECT_EQ(terminal["timings"]["prefill_ms"], 3.0);
  EXPECT_EQ(terminal["output"][0]["content"][0]["text"], "Hello \n");
  EXPECT_EQ(terminal["output"][0]["content"][0]["logprobs"].size(), 3u);
  ExpectEchoed(terminal);
  EXPECT_EQ(sse.find("[DONE]"), std::string::npos);
}

// llama-server's return_progress: qvl.prompt_progress events, numbered in the stream's
// sequence, between response.in_progress and the answer's; nothing without it, nothing
// when not streamed.
TEST(ResponsesEncoderTest, StreamsPromptProgressOnlyWhenAsked) {
  using ::qvl::testing::Progress;
  ResponsesEncoder encoder(Identity(), {.stream = true, .progress = true});
  const std::vector<NamedEvent> e = NamedEvents(StreamAll(
      encoder, {Progress(16, 0.5), Progress(48, 1.0), Text("Hi"), Final(FinishReason::kStop)}));
  ASSERT_GE(e.size(), 5u);
  EXPECT_EQ(
      EventNames(std::vector<NamedEvent>(e.begin(), e.begin() + 5)),
      (std::vector<std::string>{"response.created", "response.in_progress", "qvl.prompt_progress",
                                "qvl.prompt_progress", "response.output_item.added"}));
  EXPECT_EQ(e[2].data, json::parse(R"({"type": "qvl.prompt_progress", "sequence_number": 2,
      "prompt_progress": {"total": 80, "cache": 16, "processed": 16, "time_ms": 12.5,
                          "vision": 0.5}})"));
  EXPECT_EQ(e[3].data["prompt_progress"]["processed"], 48);
  EXPECT_EQ(Streamed(e)["output"][0]["content"][0]["text"], "Hi");

  ResponsesEncoder unasked(Identity(), {.stream = true});
  unasked.Start();
  EXPECT_EQ(unasked.Encode(Progress(16, 0.5)), "");
  ResponsesEncoder whole(Identity(), {.progress = true});
  EXPECT_EQ(whole.Encode(Progress(16, 0.5)), "");
  EXPECT_EQ(
      Body(whole, {Text("Hi"), Final(FinishReason::kStop)})["output"][0]["content"][0]["text"],
      "Hi");
}

TEST(ResponsesEncoderTest, LogprobsAreTheTokensOfTheText) {
  ResponsesEncoder with(Identity(), {.logprobs = true});
  const json r = Body(with, {Text("Hi"), Text("!"), Final(FinishReason::kStop)});
  const json& logprobs = r["output"][0]["content"][0]["logprobs"];
  ASSERT_EQ(logprobs.size(), 2u);
  EXPECT_EQ(logprobs[0]["token"], "Hi");
  EXPECT_FLOAT_EQ(logprobs[0]["logprob"].get<float>(), -0.25f);
  EXPECT_EQ(logprobs[0]["bytes"], (json{72, 105}));
  ASSERT_EQ(logprobs[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(logprobs[0]["top_logprobs"][1]["token"], "\xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(logprobs[0]["top_logprobs"][1]["bytes"], (json{0xe4, 0xb8}));
  EXPECT_EQ(logprobs[1]["token"], "!");

  ResponsesEncoder without(Identity(), {.stream = true});
  const std::vector<NamedEvent> e =
      NamedEvents(StreamAll(without, {Text("Hi"), Final(FinishReason::kStop)}));
  const json terminal = Streamed(e);
  EXPECT_EQ(terminal["output"][0]["content"][0]["logprobs"], json::array());
  for (const NamedEvent& event : e) {
    if (event.name == "response.output_text.delta") {
      EXPECT_EQ(event.data["logprobs"], json::array());
    }
  }
}

constexpr char kCall[] =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

void ExpectCall(const json& item) {
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(item["id"].get<std::string>().rfind("fc_", 0), 0u);
  EXPECT_EQ(item["call_id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(item["name"], "get_weather");
  EXPECT_EQ(item["arguments"], R"({"city":"Paris"})");
}

std::vector<std::string> TypesAndTexts(const json& output) {
  std::vector<std::string> out;
  for (const json& item : output) {
    out.push_back(item["type"] == "message"
                      ? "message:" + item["content"][0]["text"].get<std::string>()
                      : "call:" + item["name"].get<std::string>());
  }
  return out;
}

TEST(ResponsesEncoderTest, ToolCallsAreItemsInTheOrderWritten) {
  const std::string answer = std::string("Checking.\n") + kCall + "\n\nIt is sunny.";
  const std::vector<std::string> expected = {"message:Checking.", "call:get_weather",
                                             "message:It is sunny."};
  // All in one update: the order still follows the text.
  ResponsesEncoder plain(Identity(), {.parse_tool_calls = true});
  const json r = Body(plain, {Text(answer), Final(FinishReason::kStop)});
  EXPECT_EQ(TypesAndTexts(r["output"]), expected);
  ASSERT_EQ(r["output"].size(), 3u);
  ExpectCall(r["output"][1]);
  EXPECT_NE(r["output"][0]["id"], r["output"][2]["id"]);
  EXPECT_EQ(r["status"], "completed");

  ResponsesEncoder streamed(Identity(), {.stream = true, .parse_tool_calls = true});
  std::vector<GenerationUpdate> updates;
  for (size_t i = 0; i < answer.size(); i += 5) updates.push_back(Text(answer.substr(i, 5)));
  updates.push_back(Final(FinishReason::kStop));
  const std::vector<NamedEvent> e = NamedEvents(StreamAll(streamed, updates));
  const json terminal = Streamed(e);
  EXPECT_EQ(TypesAndTexts(terminal["output"]), expected);
  ASSERT_EQ(terminal["output"].size(), 3u);
  ExpectCall(terminal["output"][1]);
  std::vector<std::string> call_events;
  for (const NamedEvent& event : e) {
    if (event.data.value("output_index", -1) == 1) call_events.push_back(event.name);
  }
  EXPECT_EQ(call_events,
            (std::vector<std::string>{
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done"}));
  for (const NamedEvent& event : e) {
    if (event.name == "response.output_item.added" && event.data["output_index"] == 1) {
      EXPECT_EQ(event.data["item"]["arguments"], "");
      EXPECT_EQ(event.data["item"]["status"], "in_progress");
      EXPECT_EQ(event.data["item"]["call_id"], terminal["output"][1]["call_id"]);
    }
  }
}

TEST(ResponsesEncoderTest, WhitespaceAroundCallsMakesNoMessage) {
  const std::string answer = std::string("\n") + kCall + "\n" + kCall + "\n\n";
  ResponsesEncoder plain(Identity(), {.parse_tool_calls = true});
  const json r = Body(plain, {Text(answer), Final(FinishReason::kStop)});
  EXPECT_EQ(TypesAndTexts(r["output"]),
            (std::vector<std::string>{"call:get_weather", "call:get_weather"}));
  EXPECT_NE(r["output"][0]["call_id"], r["output"][1]["call_id"]);

  ResponsesEncoder streamed(Identity(), {.stream = true, .parse_tool_calls = true});
  std::vector<GenerationUpdate> updates;
  for (size_t i = 0; i < answer.size(); i += 3) updates.push_back(Text(answer.substr(i, 3)));
  updates.push_back(Final(FinishReason::kStop));
  const std::vector<NamedEvent> e = NamedEvents(StreamAll(streamed, updates));
  EXPECT_EQ(TypesAndTexts(Streamed(e)["output"]),
            (std::vector<std::string>{"call:get_weather", "call:get_weather"}));
  for (const NamedEvent& event : e) EXPECT_NE(event.name, "response.content_part.added");

  // With tools offered, an answer of only whitespace has no items at all.
  ResponsesEncoder blank(Identity(), {.parse_tool_calls = true});
  EXPECT_EQ(Body(blank, {Text(" \n"), Final(FinishReason::kStop)})["output"], json::array());
}

TEST(ResponsesEncoderTest, OnDoneGetsTheFinalResponseUnlessItFailed) {
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream);
    json done;
    int calls = 0;
    ResponsesEncoderOptions options{.stream = stream};
    options.on_done = [&](const json& response) {
      done = response;
      ++calls;
    };
    ResponsesEncoder encoder(Identity(), options);
    const std::vector<GenerationUpdate> updates = {Text("Hi"), Final(FinishReason::kLength)};
    const json sent =
        stream ? Streamed(NamedEvents(StreamAll(encoder, updates))) : Body(encoder, updates);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(done, sent);

    ResponsesEncoder failing(Identity(), options);
    StreamAll(failing, {Text("Hi"), Failed()});
    EXPECT_EQ(calls, 1);
  }
}

TEST(ResponsesEncoderTest, WithoutToolsWhitespaceIsTheAnswer) {
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream);
    ResponsesEncoder encoder(Identity(), {.stream = stream});
    const std::vector<GenerationUpdate> updates = {Text("\t\t "), Text("\n"),
                                                   Final(FinishReason::kLength)};
    const json r =
        stream ? Streamed(NamedEvents(StreamAll(encoder, updates))) : Body(encoder, updates);
    ASSERT_EQ(r["output"].size(), 1u) << r.dump();
    EXPECT_EQ(r["output"][0]["content"][0]["text"], "\t\t \n");
    EXPECT_EQ(r["status"], "incomplete");
  }
}

TEST(ResponsesEncoderTest, InvalidUtf8IsReplacedNotThrown) {
  ResponsesEncoder plain(Identity(), {.logprobs = true});
  json r;
  ASSERT_NO_THROW(r = Body(plain, {Text("a\xff"), Text("b"), Final(FinishReason::kStop)}));
  EXPECT_EQ(r["output"][0]["content"][0]["text"],
            "a\xef\xbf\xbd"
            "b");

  ResponsesEncoder streamed(Identity(), {.stream = true, .parse_tool_calls = true});
  std::string sse;
  ASSERT_NO_THROW(sse = StreamAll(streamed, {Text("x\xc3"), Final(FinishReason::kStop)}));
  EXPECT_EQ(Streamed(NamedEvents(sse))["output"][0]["content"][0]["text"], "x\xef\xbf\xbd");
}

TEST(ResponsesEncoderTest, OnlyChoiceZeroCounts) {
  ResponsesEncoder encoder(Identity(), {});
  GenerationUpdate other = Final(FinishReason::kStop);
  other.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(other)), "");
  EXPECT_FALSE(encoder.finished());
}

// A Thinking model's answer: its reasoning (up to "</think>") is a reasoning item before
// the message, streamed as the openai SDK builds it, and its tokens are counted.
TEST(ResponsesEncoderTest, AThinkingModelsReasoningIsAnItemBeforeTheMessage) {
  GenerationUpdate last = Final(FinishReason::kStop);
  last.usage.reasoning_tokens = 1;
  const std::vector<GenerationUpdate> updates = {Text("Blue light scatters.\n</th"),
                                                 Text("ink>\n\nBlue."), last};
  const ResponsesEncoderOptions options{.split_reasoning = true};
  ResponsesEncoder whole(Identity(), options);
  const json body = Body(whole, updates);
  ResponsesEncoder streamed(Identity(), {.stream = true, .split_reasoning = true});
  const std::vector<NamedEvent> events = NamedEvents(StreamAll(streamed, updates));
  EXPECT_EQ(
      EventNames(events),
      (std::vector<std::string>{
          "response.created", "response.in_progress", "response.output_item.added",
          "response.content_part.added", "response.reasoning_text.delta",
          "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
          "response.output_item.added", "response.content_part.added", "response.output_text.delta",
          "response.output_text.done", "response.content_part.done", "response.output_item.done",
          "response.completed"}));
  for (const json& r : {body, Streamed(events)}) {
    ASSERT_EQ(r["output"].size(), 2u) << r.dump();
    const json& reasoning = r["output"][0];
    EXPECT_EQ(reasoning["type"], "reasoning");
    EXPECT_EQ(reasoning["id"].get<std::string>().rfind("rs_", 0), 0u);
    EXPECT_EQ(reasoning["summary"], json::array());
    EXPECT_EQ(reasoning["content"],
              json::array({{{"type", "reasoning_text"}, {"text", "Blue light scatters."}}}));
    EXPECT_EQ(reasoning["status"], "completed");
    EXPECT_EQ(r["output"][1]["type"], "message");
    EXPECT_EQ(r["output"][1]["content"][0]["text"], "Blue.");
    EXPECT_EQ(r["usage"]["output_tokens"], 2);
    EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 1);
  }
}

// Cut off while it reasons: the reasoning is all there is, and it is incomplete.
TEST(ResponsesEncoderTest, AThinkingModelCutOffInItsReasoning) {
  ResponsesEncoder encoder(Identity(), {.split_reasoning = true});
  const json r = Body(encoder, {Text("Still thinking"), Final(FinishReason::kLength)});
  EXPECT_EQ(r["status"], "incomplete");
  ASSERT_EQ(r["output"].size(), 1u);
  EXPECT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["status"], "incomplete");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Still thinking");
}

// Asked for a summary (reasoning.summary, echoed), the item gives the reasoning as its
// summary as well, for clients that read only that; streamed, it comes once, as summary
// events, and the item is whole at output_item.done.
TEST(ResponsesEncoderTest, AnAskedForSummaryIsTheReasoningAsWritten) {
  ResponsesIdentity identity = Identity();
  identity.echo["reasoning"] = {{"effort", nullptr}, {"summary", "auto"}};
  GenerationUpdate last = Final(FinishReason::kStop);
  last.usage.reasoning_tokens = 3;
  const std::vector<GenerationUpdate> updates = {Text("Blue light "), Text("scatters.</think>"),
                                                 Text("\n\nBlue."), last};
  ResponsesEncoder whole(identity, {.split_reasoning = true});
  const json body = Body(whole, updates);
  ResponsesEncoder streamed(identity, {.stream = true, .split_reasoning = true});
  const std::vector<NamedEvent> events = NamedEvents(StreamAll(streamed, updates));
  EXPECT_EQ(EventNames(events),
            (std::vector<std::string>{
                "response.created", "response.in_progress", "response.output_item.added",
                "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
                "response.reasoning_summary_part.done", "response.output_item.done",
                "response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.completed"}));
  EXPECT_EQ(events[3].data["part"], json({{"type", "summary_text"}, {"text", ""}}));
  EXPECT_EQ(events[4].data["delta"], "Blue light ");
  EXPECT_EQ(events[4].data["summary_index"], 0);
  for (const json& r : {body, Streamed(events)}) {
    ASSERT_EQ(r["output"].size(), 2u) << r.dump();
    const json& reasoning = r["output"][0];
    EXPECT_EQ(reasoning["type"], "reasoning");
    EXPECT_EQ(reasoning["summary"],
              json::array({{{"type", "summary_text"}, {"text", "Blue light scatters."}}}));
    EXPECT_EQ(reasoning["content"],
              json::array({{{"type", "reasoning_text"}, {"text", "Blue light scatters."}}}));
    EXPECT_EQ(reasoning["status"], "completed");
    EXPECT_EQ(r["output"][1]["content"][0]["text"], "Blue.");
    EXPECT_EQ(r["reasoning"], json({{"effort", nullptr}, {"summary", "auto"}}));
  }
}

// An Instruct model has no reasoning: a summary asked for gives no item.
TEST(ResponsesEncoderTest, WithoutReasoningASummaryGivesNoItem) {
  ResponsesIdentity identity = Identity();
  identity.echo["reasoning"] = {{"effort", nullptr}, {"summary", "detailed"}};
  ResponsesEncoder encoder(identity, {});
  const json r = Body(encoder, {Text("Blue."), Final(FinishReason::kStop)});
  ASSERT_EQ(r["output"].size(), 1u) << r.dump();
  EXPECT_EQ(r["output"][0]["type"], "message");
}

}  // namespace
}  // namespace qvl
