// POST /tokenize and /detokenize over HTTP with the tiny fixture model: a fixture's
// messages give exactly its golden prompt ids (images and videos counted as the chat
// route prefills them), text round-trips, and bad bodies are 400s naming their field.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "engine/request_preparer.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/";

std::vector<int> GoldenPromptIds(const std::string& name) {
  return nlohmann::json::parse(ReadFile(kCases + name + "/meta.json"))["input_ids"];
}

class ServerTokenizeTest : public SharedServerTest {
 protected:
  static HttpResult Tokenize(const nlohmann::json& body) {
    return PostJson(*harness_, "/tokenize", body.dump());
  }
  static HttpResult Detokenize(const nlohmann::json& body) {
    return PostJson(*harness_, "/detokenize", body.dump());
  }
  static void ExpectBadField(const HttpResult& r, int status, const std::string& param,
                             const std::string& message_start) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_TRUE(r.json.is_object()) << r.body;
    EXPECT_EQ(r.json["error"]["param"], param) << r.body;
    EXPECT_EQ(r.json["error"]["message"].get<std::string>().rfind(message_start, 0), 0u) << r.body;
  }
};

TEST_F(ServerTokenizeTest, AFixturesMessagesGiveItsGoldenPromptIds) {
  const int64_t context = harness_->engine()->options().context_tokens;
  for (const TinyCase& c : LoadTinyCases()) {
    SCOPED_TRACE(c.name);
    const HttpResult r = Tokenize(c.request);
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
    const std::vector<int> golden = GoldenPromptIds(c.name);
    EXPECT_EQ(r.json["tokens"], nlohmann::json(golden));
    EXPECT_EQ(r.json["count"], golden.size());
    EXPECT_EQ(r.json["max_model_len"], context);
    // What each medium costs: its tokens are among the prompt's.
    int64_t media_tokens = 0;
    for (const char* kind : {"images", "videos"}) {
      for (const nlohmann::json& medium : r.json[kind])
        media_tokens += medium["tokens"].get<int64_t>();
    }
    EXPECT_LT(media_tokens, static_cast<int64_t>(golden.size()));
  }
  const HttpResult one_image = Tokenize(LoadTinyCase("02_one_image_jpeg").request);
  ASSERT_EQ(one_image.json["images"].size(), 1u);
  EXPECT_EQ(one_image.json["images"][0]["tokens"], 80);
  EXPECT_EQ(one_image.json["images"][0]["grid_thw"], (nlohmann::json{1, 16, 20}));
  EXPECT_EQ(one_image.json["videos"], nlohmann::json::array());
  const HttpResult video = Tokenize(LoadTinyCase("07_video_frames").request);
  ASSERT_EQ(video.json["videos"].size(), 1u);
  EXPECT_EQ(video.json["videos"][0]["frames"], 8);
}

// llama-server's /apply-template: the chat template's text of a conversation, each image
// and video its placeholder, as the reference's processor is given it (the fixtures'
// prompt_text); a body without messages is a 400 naming them.
TEST_F(ServerTokenizeTest, ApplyTemplateGivesTheReferencesPromptText) {
  for (const TinyCase& c : LoadTinyCases()) {
    SCOPED_TRACE(c.name);
    const HttpResult r = PostJson(*harness_, "/apply-template", c.request.dump());
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
    const nlohmann::json meta = nlohmann::json::parse(ReadFile(kCases + c.name + "/meta.json"));
    EXPECT_EQ(r.json, (nlohmann::json{{"prompt", meta["prompt_text"]}}));
  }
  ExpectBadField(PostJson(*harness_, "/apply-template", R"({"content": "hi"})"), 400, "messages",
                 "messages: is required");
  const HttpResult get = Get(*harness_, "/apply-template");
  EXPECT_EQ(get.status, 405);
}

TEST_F(ServerTokenizeTest, WithoutTheGenerationPromptTheAssistantTurnIsNotOpened) {
  nlohmann::json body = LoadTinyCase("04_two_turns").request;
  body["add_generation_prompt"] = false;
  const HttpResult r = Tokenize(body);
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<int> golden = GoldenPromptIds("04_two_turns");
  golden.resize(golden.size() - 3);  // <|im_start|> assistant \n
  EXPECT_EQ(r.json["tokens"], nlohmann::json(golden));
  EXPECT_EQ(r.json["count"], golden.size());
}

// A conversation sent whole, ending with the assistant's answer (to count or train on
// it): without the generation prompt the ids are the template's text of it, that last
// answer kept, and with it the same text with the assistant turn opened after it.
const nlohmann::json kAnswered = {
    {{"role", "user"}, {"content", "What is 2 + 2?"}},
    {{"role", "assistant"}, {"content", "4"}, {"reasoning_content", "Two and two."}}};

// The text of the ids `body` tokenizes to (special tokens spelled out), "" on failure.
std::string TokenizedText(ServerHarness& harness, const nlohmann::json& body) {
  const HttpResult r = PostJson(harness, "/tokenize", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  if (r.status != 200) return "";
  EXPECT_EQ(r.json["count"], r.json["tokens"].size());
  const std::vector<int32_t> ids = r.json["tokens"];
  return harness.engine()->tokenizer().Decode(ids, /*skip_special=*/false);
}

// As the reference templates render it (chat_template.json): the Instruct one ignores
// the reasoning; the Thinking one shows it for an answer after the last user message,
// and its generation prompt opens the reasoning.
void ExpectTheTemplatesText(ServerHarness& harness, const std::string& answer,
                            const std::string& opening) {
  const std::string conversation = "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n" + answer;
  EXPECT_EQ(TokenizedText(harness, {{"messages", kAnswered}, {"add_generation_prompt", false}}),
            conversation);
  EXPECT_EQ(TokenizedText(harness, {{"messages", kAnswered}}), conversation + opening);
  EXPECT_EQ(TokenizedText(harness, {{"messages", kAnswered}, {"add_generation_prompt", true}}),
            conversation + opening);
}

TEST_F(ServerTokenizeTest, AConversationEndingWithAnAnswerKeepsItWithoutTheGenerationPrompt) {
  ExpectTheTemplatesText(*harness_, "<|im_start|>assistant\n4<|im_end|>\n",
                         "<|im_start|>assistant\n");
}

TEST(ServerTokenizeThinkingTest, TheThinkingTemplatesGenerationPromptOpensTheReasoning) {
  HarnessOptions options = DefaultHarnessOptions();
  options.model_dir = TinyThinkingModel();
  ServerHarness harness(options);
  ASSERT_EQ(harness.engine()->preparer().chat_template(), ChatTemplateKind::kThinking);
  ExpectTheTemplatesText(harness,
                         "<|im_start|>assistant\n<think>\nTwo and two.\n</think>\n\n4<|im_end|>\n",
                         "<|im_start|>assistant\n<think>\n");
}

TEST_F(ServerTokenizeTest, TextRoundTripsThroughDetokenize) {
  const std::string text = "Hello, world! <|im_end|> na\xc3\xafve caf\xc3\xa9 \xf0\xa0\x9c\x8e 42";
  const HttpResult llama = Tokenize({{"content", text}});
  ASSERT_EQ(llama.status, 200) << llama.body;
  const nlohmann::json ids = llama.json["tokens"];
  ASSERT_GT(ids.size(), 5u);
  EXPECT_EQ(llama.json["count"], ids.size());
  EXPECT_FALSE(llama.json.contains("images"));
  // <|im_end|> is the special token, not its characters.
  EXPECT_NE(std::find(ids.begin(), ids.end(), 151645), ids.end()) << ids;

  const HttpResult vllm = Tokenize({{"prompt", text}, {"model", "qwen3-vl"}});
  ASSERT_EQ(vllm.status, 200) << vllm.body;
  EXPECT_EQ(vllm.json["tokens"], ids);

  const HttpResult back = Detokenize({{"tokens", ids}});
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(back.json["prompt"], text);   // vLLM's key
  EXPECT_EQ(back.json["content"], text);  // llama-server's key

  // Pieces: each token's text, or its bytes where it holds part of a character; together
  // they are the text.
  const HttpResult pieces = Tokenize({{"content", text}, {"with_pieces", true}});
  ASSERT_EQ(pieces.status, 200) << pieces.body;
  ASSERT_EQ(pieces.json["tokens"].size(), ids.size());
  std::string joined;
  bool some_bytes = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    const nlohmann::json& token = pieces.json["tokens"][i];
    EXPECT_EQ(token["id"], ids[i]);
    if (token["piece"].is_string()) {
      joined += token["piece"].get<std::string>();
    } else {
      some_bytes = true;
      for (const nlohmann::json& byte : token["piece"])
        joined.push_back(static_cast<char>(byte.get<int>()));
    }
  }
  EXPECT_EQ(joined, text);
  EXPECT_TRUE(some_bytes) << "a rare character's bytes are split over tokens";

  const HttpResult strs = Tokenize({{"prompt", "Hello world"}, {"return_token_strs", true}});
  ASSERT_EQ(strs.status, 200) << strs.body;
  EXPECT_EQ(strs.json["token_strs"], (nlohmann::json{"Hello", "\xc4\xa0world"}));
}

TEST_F(ServerTokenizeTest, BadBodiesAre400sNamingTheField) {
  ExpectBadField(Tokenize({{"content", 5}}), 400, "content", "content: expected a string");
  ExpectBadField(Tokenize(nlohmann::json::object()), 400, "messages", "messages: is required");
  ExpectBadField(Tokenize({{"content", "a"}, {"messages", nlohmann::json::array()}}), 400,
                 "messages", "messages: give one of content, prompt and messages");
  ExpectBadField(Tokenize({{"prompt", "a"}, {"model", "gpt-4o"}}), 404, "model", "model: ");
  ExpectBadField(Tokenize({{"messages",
                            {{{"role", "user"},
                              {"content",
                               {{{"type", "image_url"},
                                 {"image_url", {{"url", "data:image/png;base64,AAA*"}}}}}}}}}}),
                 400, "messages[0].content[0].image_url.url",
                 "messages[0].content[0].image_url.url: ");
  ExpectBadField(Detokenize({{"tokens", {1, -1}}}), 400, "tokens[1]",
                 "tokens[1]: token id -1 is not in the vocabulary");
  ExpectBadField(Detokenize({{"tokens", "1 2"}}), 400, "tokens", "tokens: expected an array");
  const HttpResult get = Get(*harness_, "/tokenize");
  EXPECT_EQ(get.status, 405) << get.body;
}

}  // namespace
}  // namespace qvl::testing
