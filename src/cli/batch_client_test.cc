#include "cli/batch_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "server_harness.h"

namespace qvl::cli {
namespace {

using testing::ServerHarness;

nlohmann::json Chat(int max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
          {"max_tokens", max_tokens},
          {"temperature", 0}};
}

std::string Line(const std::string& id, const std::string& url, const nlohmann::json& body) {
  return nlohmann::json{{"custom_id", id}, {"method", "POST"}, {"url", url}, {"body", body}}.dump();
}

struct Ran {
  BatchSummary summary;
  std::vector<nlohmann::json> lines;
};

Ran RunLines(const std::string& input, BatchOptions options) {
  std::istringstream in(input);
  std::ostringstream out;
  Ran ran;
  ran.summary = RunBatch(in, out, options);
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    ran.lines.push_back(nlohmann::json::parse(line));
  return ran;
}

class BatchClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { harness_ = new ServerHarness(); }
  static void TearDownTestSuite() { delete harness_; }
  static BatchOptions Options(const std::string& suffix = "") {
    BatchOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(harness_->port()) + suffix;
    o.concurrency = 3;
    o.retries = 0;
    return o;
  }
  static ServerHarness* harness_;
};
ServerHarness* BatchClientTest::harness_ = nullptr;

// Every line gets its result line, in input order: an answer as the route gives it, a
// server's refusal as its response, and a line that is no request as an error.
TEST_F(BatchClientTest, AnswersEveryLineInOrder) {
  const testing::HttpResult direct = PostJson(*harness_, "/v1/chat/completions", Chat(4).dump());
  ASSERT_EQ(direct.status, 200) << direct.body;
  nlohmann::json streamed = Chat(4);
  streamed["stream"] = true;
  const std::string input =
      Line("chat", "/v1/chat/completions", Chat(4)) + "\n" +
      Line("text", "/v1/completions", {{"prompt", "The sky"}, {"max_tokens", 2}}) + "\n" +
      "not json\n\n" + Line("chat", "/v1/completions", {{"prompt", "x"}}) + "\n" +
      Line("images", "/v1/images/generations", {{"prompt", "x"}}) + "\n" +
      Line("refused", "/v1/chat/completions", Chat(-1)) + "\n" +
      Line("streamed", "/v1/chat/completions", streamed) + "\n" +
      Line("embedded", "/v1/embeddings", {{"input", "sky"}}) + "\n" +
      Line("odd stream", "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}, {"stream", "no"}});
  const Ran ran = RunLines(input, Options());
  ASSERT_EQ(ran.lines.size(), 9u);
  EXPECT_EQ(ran.summary.requests, 9);
  EXPECT_EQ(ran.summary.answered, 3);
  EXPECT_EQ(ran.summary.failed, 6);

  const nlohmann::json& chat = ran.lines[0];
  EXPECT_EQ(chat["custom_id"], "chat");
  EXPECT_EQ(chat["id"].get<std::string>().rfind("batch_req_", 0), 0u);
  EXPECT_EQ(chat["error"], nullptr);
  EXPECT_EQ(chat["response"]["status_code"], 200);
  EXPECT_EQ(chat["response"]["request_id"].get<std::string>().rfind("req_", 0), 0u);
  EXPECT_EQ(chat["response"]["body"]["choices"][0]["message"]["content"],
            direct.json["choices"][0]["message"]["content"]);
  EXPECT_EQ(ran.lines[1]["response"]["body"]["object"], "text_completion");
  EXPECT_EQ(ran.lines[7]["response"]["body"]["object"], "list");

  const std::vector<std::pair<std::string, std::string>> errors = {
      {"", "line 3: expected a JSON object {\"custom_id\", \"method\", \"url\", \"body\"}"},
      {"chat", "line 5: custom_id: \"chat\" names an earlier request"},
      {"images",
       "line 6: url: expected /v1/chat/completions, /v1/completions, /v1/embeddings or "
       "/v1/responses"},
      {"streamed", "line 8: body.stream: a batch takes whole answers; leave stream out"},
  };
  const size_t at[] = {2, 3, 4, 6};
  for (size_t i = 0; i < errors.size(); ++i) {
    const nlohmann::json& line = ran.lines[at[i]];
    EXPECT_EQ(line["custom_id"],
              errors[i].first.empty() ? nlohmann::json() : nlohmann::json(errors[i].first));
    EXPECT_EQ(line["response"], nullptr);
    EXPECT_EQ(line["error"]["code"], "invalid_request");
    EXPECT_EQ(line["error"]["message"], errors[i].second);
  }
  const nlohmann::json& refused = ran.lines[5];
  EXPECT_EQ(refused["error"], nullptr);
  EXPECT_EQ(refused["response"]["status_code"], 400);
  EXPECT_EQ(refused["response"]["body"]["error"]["param"], "max_tokens");
  // The server's word on a stream that is not a boolean.
  EXPECT_EQ(ran.lines[8]["response"]["status_code"], 400);
  EXPECT_EQ(ran.lines[8]["response"]["body"]["error"]["param"], "stream");
}

// An OpenAI base URL (ending in /v1, with or without a slash) takes the lines' paths as
// they are; ids stay unique.
TEST_F(BatchClientTest, TakesAnOpenAiBaseUrl) {
  std::string input;
  for (int i = 0; i < 5; ++i)
    input += Line("q" + std::to_string(i), "/v1/chat/completions", Chat(2)) + "\n";
  for (const std::string suffix : {"/v1", "/v1/"}) {
    const Ran ran = RunLines(input, Options(suffix));
    ASSERT_EQ(ran.lines.size(), 5u);
    EXPECT_EQ(ran.summary.answered, 5);
    std::set<std::string> ids;
    for (size_t i = 0; i < ran.lines.size(); ++i) {
      EXPECT_EQ(ran.lines[i]["custom_id"], "q" + std::to_string(i));
      EXPECT_EQ(ran.lines[i]["response"]["status_code"], 200) << ran.lines[i].dump();
      ids.insert(ran.lines[i]["id"].get<std::string>());
    }
    EXPECT_EQ(ids.size(), 5u);
  }
}

// A server still loading answers 503: with no retries left that is the line's response;
// a server that is not there is the line's error.
TEST(BatchClient, ReportsAServerThatCannotAnswer) {
  testing::HarnessOptions loading = testing::DefaultHarnessOptions();
  loading.load_model = false;
  ServerHarness harness(loading);
  BatchOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(harness.port());
  options.retries = 0;
  const std::string input = Line("a", "/v1/chat/completions", Chat(2));
  Ran ran = RunLines(input, options);
  ASSERT_EQ(ran.lines.size(), 1u);
  EXPECT_EQ(ran.lines[0]["response"]["status_code"], 503);
  EXPECT_EQ(ran.summary.failed, 1);

  options.url = "http://127.0.0.1:1";
  ran = RunLines(input, options);
  ASSERT_EQ(ran.lines.size(), 1u);
  EXPECT_EQ(ran.lines[0]["response"], nullptr);
  EXPECT_EQ(ran.lines[0]["error"]["code"], "connection_error");
}

TEST(BatchClient, RefusesAUrlItCannotUse) {
  BatchOptions options;
  std::istringstream in("");
  std::ostringstream out;
  for (const auto& [url, message] : std::vector<std::pair<std::string, std::string>>{
           {"https://example.com",
            "--url https://example.com: https is not supported; give "
            "the server's own http address"},
           {"127.0.0.1:8080", "--url 127.0.0.1:8080: expected http://HOST[:PORT][/PREFIX]"},
           {"http:///v1", "--url http:///v1: expected http://HOST[:PORT][/PREFIX]"}}) {
    options.url = url;
    try {
      RunBatch(in, out, options);
      ADD_FAILURE() << url;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

}  // namespace
}  // namespace qvl::cli
