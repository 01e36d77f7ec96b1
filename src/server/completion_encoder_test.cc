#include "server/completion_encoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/encoder_updates_for_test.h"

namespace qvl {
namespace {

CompletionIdentity Identity() { return {"chatcmpl-1", 1700000000, "qwen3-vl"}; }

using ::qvl::testing::Events;
using ::qvl::testing::Progress;
using ::qvl::testing::Text;

// With the effective grid of one image.
GenerationUpdate Final(FinishReason reason) {
  GenerationUpdate u = testing::Final(reason);
  ImageGrid grid;
  grid.width = 320;
  grid.height = 240;
  grid.resized_width = 320;
  grid.resized_height = 256;
  grid.grid_h = 16;
  grid.grid_w = 20;
  grid.tokens = 80;
  u.timings.images.push_back(grid);
  return u;
}

TEST(CompletionEncoderTest, StreamsOpenAiChunks) {
  CompletionEncoder encoder(Identity(), {.stream = true, .include_usage = true});
  std::string sse = encoder.Start();
  sse += encoder.Encode(Text("Hel"));
  sse += encoder.Encode(Text("lo"));
  EXPECT_FALSE(encoder.finished());
  sse += encoder.Encode(Final(FinishReason::kStop));
  EXPECT_TRUE(encoder.finished());
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(e[0]["id"], "chatcmpl-1");
  EXPECT_EQ(e[0]["model"], "qwen3-vl");
  EXPECT_EQ(e[0]["choices"][0]["delta"], (nlohmann::json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(e[1]["choices"][0]["delta"]["content"], "Hel");
  EXPECT_TRUE(e[1]["choices"][0]["logprobs"].is_null());
  EXPECT_TRUE(e[1]["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(e[1]["choices"][0].contains("stop_reason"));
  EXPECT_EQ(e[2]["choices"][0]["delta"]["content"], "lo");
  EXPECT_EQ(e[3]["choices"][0]["delta"], nlohmann::json::object());
  EXPECT_EQ(e[3]["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(e[3]["choices"][0].contains("stop_reason"));
  EXPECT_TRUE(e[3]["choices"][0]["stop_reason"].is_null());
  EXPECT_EQ(e[3]["timings"]["images"][0]["grid_thw"], (nlohmann::json{1, 16, 20}));
  EXPECT_TRUE(e[3]["usage"].is_null());
  EXPECT_EQ(e[4]["choices"], nlohmann::json::array());
  EXPECT_EQ(e[4]["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(e[4]["usage"]["completion_tokens"], 2);
  EXPECT_EQ(e[4]["usage"]["total_tokens"], 14);
  EXPECT_EQ(e[4]["usage"]["prompt_tokens_details"]["cached_tokens"], 8);
  EXPECT_EQ(e[5], "[DONE]");
}

// llama-server's return_progress: chunks with no choices and a prompt_progress before the
// answer's; nothing without it, and nothing when not streamed.
TEST(CompletionEncoderTest, StreamsPromptProgressOnlyWhenAsked) {
  CompletionEncoder encoder(Identity(), {.stream = true, .progress = true});
  std::string sse = encoder.Start();
  sse += encoder.Encode(Progress(16, 0.5));
  sse += encoder.Encode(Progress(48, 1.0));
  sse += encoder.Encode(Text("Hi"));
  sse += encoder.Encode(Final(FinishReason::kStop));
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[1]["object"], "chat.completion.chunk");
  EXPECT_EQ(e[1]["choices"], nlohmann::json::array());
  EXPECT_EQ(e[1]["prompt_progress"],
            nlohmann::json::parse(
                R"({"total": 80, "cache": 16, "processed": 16, "time_ms": 12.5, "vision": 0.5})"));
  EXPECT_EQ(e[2]["prompt_progress"]["processed"], 48);
  EXPECT_EQ(e[3]["choices"][0]["delta"]["content"], "Hi");
  EXPECT_FALSE(e[3].contains("prompt_progress"));

  CompletionEncoder unasked(Identity(), {.stream = true});
  unasked.Start();
  EXPECT_EQ(unasked.Encode(Progress(16, 0.5)), "");
  CompletionEncoder whole(Identity(), {.stream = false, .progress = true});
  EXPECT_EQ(whole.Encode(Progress(16, 0.5)), "");
  whole.Encode(Text("Hi"));
  const nlohmann::json body = nlohmann::json::parse(whole.Encode(Final(FinishReason::kStop)));
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hi");
}

TEST(CompletionEncoderTest, StreamsLogprobsAndReplacesBrokenUtf8) {
  CompletionEncoder encoder(Identity(), {.stream = true, .logprobs = true});
  const std::vector<nlohmann::json> e = Events(encoder.Encode(Text("Hi")));
  ASSERT_EQ(e.size(), 1u);
  const nlohmann::json& content = e[0]["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 1u);
  EXPECT_EQ(content[0]["token"], "Hi");
  EXPECT_FLOAT_EQ(content[0]["logprob"].get<float>(), -0.25f);
  EXPECT_EQ(content[0]["bytes"], (nlohmann::json{72, 105}));
  ASSERT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(content[0]["top_logprobs"][1]["token"], "\xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(content[0]["top_logprobs"][1]["bytes"], (nlohmann::json{0xe4, 0xb8}));
}

TEST(CompletionEncoderTest, NonStreamedIsOneCompletion) {
  CompletionEncoder encoder(Identity(), {.logprobs = true});
  EXPECT_EQ(encoder.Start(), "");
  EXPECT_EQ(encoder.Encode(Text("Hel")), "");
  EXPECT_EQ(encoder.Encode(Text("lo")), "");
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kLength)));
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["created"], 1700000000);
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(c["choices"][0]["message"]["content"], "Hello");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(c["choices"][0].contains("stop_reason"));
  EXPECT_TRUE(c["choices"][0]["stop_reason"].is_null());
  EXPECT_EQ(c["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_EQ(c["usage"]["prompt_tokens_details"]["cached_tokens"], 8);
  EXPECT_EQ(c["timings"]["prefill_ms"], 3.0);
  EXPECT_EQ(c["timings"]["images"][0]["tokens"], 80);
}

TEST(CompletionEncoderTest, AnswersCutShortEndWithLengthAndTheRealReason) {
  GenerationUpdate failed = Final(FinishReason::kError);
  failed.error_code = ErrorCode::kInternal;
  failed.error = "engine step failed";
  CompletionEncoder plain(Identity(), {});
  plain.Encode(Text("Hel"));
  const nlohmann::json body = nlohmann::json::parse(plain.Encode(GenerationUpdate(failed)));
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hel");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["error"]["message"], "the answer failed: engine step failed");
  EXPECT_EQ(body["error"]["code"], "internal_error");

  CompletionEncoder streamed(Identity(), {.stream = true});
  streamed.Start();
  const std::vector<nlohmann::json> e = Events(streamed.Encode(Final(FinishReason::kCancelled)));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(e[0]["error"]["message"], "the server shut down before the answer was complete");
  EXPECT_EQ(e[0]["error"]["type"], "server_error");
  EXPECT_EQ(e[0]["error"]["code"], "unavailable");
  EXPECT_EQ(e[1], "[DONE]");
  EXPECT_TRUE(streamed.finished());

  CompletionEncoder finished(Identity(), {.stream = true});
  const std::vector<nlohmann::json> ok = Events(finished.Encode(Final(FinishReason::kStop)));
  EXPECT_FALSE(ok[0].contains("error"));
}

GenerationUpdate ForChoice(GenerationUpdate u, int choice) {
  u.choice = choice;
  return u;
}

// vLLM's stop_reason: each choice's own stop string, else its stop token id.
TEST(CompletionEncoderTest, EachChoiceNamesTheStopThatEndedIt) {
  GenerationUpdate by_string = Final(FinishReason::kStop);
  by_string.stop = "```";
  GenerationUpdate by_token = ForChoice(Final(FinishReason::kStop), 1);
  by_token.stop_token = 151643;

  CompletionEncoder plain(Identity(), {.choices = 2});
  plain.Encode(GenerationUpdate(by_token));
  const nlohmann::json c = nlohmann::json::parse(plain.Encode(GenerationUpdate(by_string)));
  EXPECT_EQ(c["choices"][0]["stop_reason"], "```");
  EXPECT_EQ(c["choices"][1]["stop_reason"], 151643);

  CompletionEncoder streamed(Identity(), {.stream = true, .choices = 2});
  std::string sse = streamed.Encode(GenerationUpdate(by_token));
  sse += streamed.Encode(GenerationUpdate(by_string));
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0]["choices"][0]["index"], 1);
  EXPECT_EQ(e[0]["choices"][0]["stop_reason"], 151643);
  EXPECT_EQ(e[1]["choices"][0]["index"], 0);
  EXPECT_EQ(e[1]["choices"][0]["stop_reason"], "```");
  EXPECT_EQ(e[2], "[DONE]");
}

TEST(CompletionEncoderTest, NonStreamedChoicesAreOneCompletionWhenAllAreDone) {
  CompletionEncoder encoder(Identity(), {.choices = 2});
  EXPECT_EQ(encoder.Encode(ForChoice(Text("A"), 1)), "");
  EXPECT_EQ(encoder.Encode(ForChoice(Text("B"), 0)), "");
  EXPECT_EQ(encoder.Encode(ForChoice(Final(FinishReason::kStop), 1)), "");
  EXPECT_FALSE(encoder.finished());
  const nlohmann::json c =
      nlohmann::json::parse(encoder.Encode(ForChoice(Final(FinishReason::kLength), 0)));
  EXPECT_TRUE(encoder.finished());
  ASSERT_EQ(c["choices"].size(), 2u);
  EXPECT_EQ(c["choices"][0]["index"], 0);
  EXPECT_EQ(c["choices"][0]["message"]["content"], "B");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["choices"][1]["index"], 1);
  EXPECT_EQ(c["choices"][1]["message"]["content"], "A");
  EXPECT_EQ(c["choices"][1]["finish_reason"], "stop");
  // The prompt counts once, the answers add up.
  EXPECT_EQ(c["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(c["usage"]["completion_tokens"], 4);
  EXPECT_EQ(encoder.summary().usage.completion_tokens, 4);
}

TEST(CompletionEncoderTest, StreamedChoicesCarryTheirIndexAndEndTogether) {
  CompletionEncoder encoder(Identity(), {.stream = true, .include_usage = true, .choices = 2});
  std::string sse = encoder.Start();
  sse += encoder.Encode(ForChoice(Text("x"), 1));
  sse += encoder.Encode(ForChoice(Final(FinishReason::kStop), 1));
  EXPECT_EQ(sse.find("[DONE]"), std::string::npos);
  sse += encoder.Encode(ForChoice(Text("y"), 0));
  sse += encoder.Encode(ForChoice(Final(FinishReason::kStop), 0));
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 8u);
  EXPECT_EQ(e[0]["choices"][0]["index"], 0);
  EXPECT_EQ(e[1]["choices"][0]["index"], 1);
  EXPECT_EQ(e[2]["choices"][0]["index"], 1);
  EXPECT_EQ(e[2]["choices"][0]["delta"]["content"], "x");
  EXPECT_EQ(e[3]["choices"][0]["index"], 1);
  EXPECT_EQ(e[3]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(e[4]["choices"][0]["delta"]["content"], "y");
  EXPECT_EQ(e[5]["choices"][0]["index"], 0);
  EXPECT_EQ(e[5]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(e[6]["usage"]["completion_tokens"], 4);
  EXPECT_EQ(e[7], "[DONE]");
}

constexpr char kCall[] =
    "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
    "\"Paris\"}}\n</tool_call>";

TEST(CompletionEncoderTest, NonStreamedToolCallsBecomeToolCalls) {
  CompletionEncoder encoder(Identity(), {.parse_tool_calls = true});
  encoder.Encode(Text(kCall));
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kStop)));
  const nlohmann::json& message = c["choices"][0]["message"];
  EXPECT_EQ(message["content"], "Checking.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["type"], "function");
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(message["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(c["choices"][0]["finish_reason"], "tool_calls");
}

TEST(CompletionEncoderTest, StreamedToolCallsArriveAsToolCallDeltas) {
  CompletionEncoder encoder(Identity(), {.stream = true, .parse_tool_calls = true});
  std::string sse = encoder.Start();
  const std::string call = kCall;
  for (size_t i = 0; i < call.size(); i += 5) sse += encoder.Encode(Text(call.substr(i, 5)));
  sse += encoder.Encode(Final(FinishReason::kStop));
  std::string content;
  nlohmann::json calls = nlohmann::json::array();
  std::string finish;
  for (const nlohmann::json& event : Events(sse)) {
    if (event == "[DONE]") continue;
    const nlohmann::json& choice = event["choices"][0];
    if (choice["delta"].contains("content")) content += choice["delta"]["content"];
    if (choice["delta"].contains("tool_calls")) {
      for (const auto& c : choice["delta"]["tool_calls"]) calls.push_back(c);
    }
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(content, "Checking.\n");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(calls[0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(finish, "tool_calls");
}

// A Thinking model's answer, split at "</think>" as vLLM's and llama-server's are:
// message.reasoning_content beside message.content, and the reasoning's share of the
// completion tokens in completion_tokens_details.
TEST(CompletionEncoderTest, NonStreamedReasoningIsReasoningContent) {
  GenerationUpdate last = Final(FinishReason::kStop);
  last.usage.reasoning_tokens = 1;
  CompletionEncoder encoder(Identity(), {.split_reasoning = true});
  encoder.Encode(Text("Blue light scatters.\n</th"));
  encoder.Encode(Text("ink>\n\nBlue."));
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(std::move(last)));
  const nlohmann::json& message = c["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "Blue light scatters.");
  EXPECT_EQ(message["content"], "Blue.");
  EXPECT_EQ(c["usage"]["completion_tokens"], 2);
  EXPECT_EQ(c["usage"]["completion_tokens_details"], (nlohmann::json{{"reasoning_tokens", 1}}));

  // An Instruct model's answer is its text as written, with no reasoning fields.
  CompletionEncoder instruct(Identity(), {});
  instruct.Encode(Text("r</think>a"));
  const nlohmann::json plain = nlohmann::json::parse(instruct.Encode(Final(FinishReason::kStop)));
  EXPECT_EQ(plain["choices"][0]["message"]["content"], "r</think>a");
  EXPECT_FALSE(plain["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_FALSE(plain["usage"].contains("completion_tokens_details"));
}

TEST(CompletionEncoderTest, StreamedReasoningComesAsReasoningContentDeltasFirst) {
  CompletionEncoder split(Identity(), {.stream = true, .logprobs = true, .split_reasoning = true});
  std::string sse = split.Start();
  sse += split.Encode(Text("Blue light "));
  sse += split.Encode(Text("scatters.\n</th"));  // the tag's start is held back
  sse += split.Encode(Text("ink>"));
  sse += split.Encode(Text("\n\nBl"));
  sse += split.Encode(Text("ue."));
  sse += split.Encode(Final(FinishReason::kStop));
  std::vector<std::pair<std::string, std::string>> deltas;
  size_t logprob_tokens = 0;
  for (const nlohmann::json& event : Events(sse)) {
    if (event == "[DONE]") continue;
    const nlohmann::json& choice = event["choices"][0];
    if (!choice["logprobs"].is_null()) logprob_tokens += choice["logprobs"]["content"].size();
    for (const char* key : {"reasoning_content", "content"}) {
      if (choice["delta"].contains(key)) deltas.emplace_back(key, choice["delta"][key]);
    }
  }
  EXPECT_EQ(deltas, (std::vector<std::pair<std::string, std::string>>{
                        {"content", ""},  // the role chunk
                        {"reasoning_content", "Blue light "},
                        {"reasoning_content", "scatters."},
                        {"content", ""},  // the tag's token: its logprobs, no text
                        {"content", "Bl"},
                        {"content", "ue."}}));
  EXPECT_EQ(logprob_tokens, 5u);  // every token once
}

TEST(CompletionEncoderTest, ToolCallsAreParsedFromTheReplyAfterTheReasoning) {
  CompletionEncoder encoder(Identity(), {.parse_tool_calls = true, .split_reasoning = true});
  encoder.Encode(Text("I need the weather.\n</think>\n\n"));
  encoder.Encode(Text(kCall));
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kStop)));
  const nlohmann::json& message = c["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "I need the weather.");
  EXPECT_EQ(message["content"], "Checking.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "tool_calls");
}

// vLLM's prompt_logprobs: null for the first prompt token, then each one's entry and its
// alternatives keyed by token id, with their ranks; from choice 0's update.
TEST(CompletionEncoderTest, PromptLogprobsInVllmsShape) {
  CompletionEncoder encoder(Identity(), {.prompt_logprobs = 1});
  GenerationUpdate first = Text("Hi");
  first.prompt_tokens.resize(3);
  first.prompt_tokens[0].chosen = {5, "The", 0};
  first.prompt_tokens[1].chosen = {6, " sky", -1.5f};
  first.prompt_tokens[1].top = {{9, " sea", -0.5f}, {6, " sky", -1.5f}};
  first.prompt_tokens[1].rank = 2;
  first.prompt_tokens[2].chosen = {7, " is", -0.25f};
  first.prompt_tokens[2].top = {{7, " is", -0.25f}};
  first.prompt_tokens[2].rank = 1;
  encoder.Encode(std::move(first));
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kStop)));
  EXPECT_EQ(c["prompt_logprobs"], nlohmann::json::parse(R"([null,
      {"9": {"logprob": -0.5, "rank": 1, "decoded_token": " sea"},
       "6": {"logprob": -1.5, "rank": 2, "decoded_token": " sky"}},
      {"7": {"logprob": -0.25, "rank": 1, "decoded_token": " is"}}])"));
  CompletionEncoder unasked(Identity(), {});
  EXPECT_FALSE(nlohmann::json::parse(unasked.Encode(Final(FinishReason::kStop)))
                   .contains("prompt_logprobs"));
}

}  // namespace
}  // namespace qvl
