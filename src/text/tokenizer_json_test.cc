// Loading small hand-made tokenizer.json files: behavior of the BPE details on a tiny
// vocabulary, and one clear error per kind of malformed or unsupported file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "text/byte_alphabet.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

std::string ByteName(int byte) {
  std::string name;
  text::AppendUtf8(text::kByteToChar[byte], &name);
  return name;
}

// Token b < 256 is the byte b; then "aa" (256), "aaa" (257), "ab" (258); <a> and <ab>
// are added tokens.
Json TinyTokenizerJson() {
  Json vocab = Json::object();
  for (int byte = 0; byte < 256; ++byte) vocab[ByteName(byte)] = byte;
  vocab["aa"] = 256;
  vocab["aaa"] = 257;
  vocab["ab"] = 258;
  const auto added = [](int id, const char* content, bool special) {
    return Json{{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", special}};
  };
  return Json{{"version", "1.0"},
              {"added_tokens", {added(259, "<a>", true), added(260, "<ab>", false)}},
              {"normalizer", {{"type", "NFC"}}},
              {"pre_tokenizer",
               {{"type", "Sequence"},
                {"pretokenizers",
                 {{{"type", "Split"},
                   {"pattern", {{"Regex", std::string(text::kQwen2SplitPattern)}}},
                   {"behavior", "Isolated"},
                   {"invert", false}},
                  {{"type", "ByteLevel"},
                   {"add_prefix_space", false},
                   {"trim_offsets", false},
                   {"use_regex", false}}}}}},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model",
               {{"type", "BPE"},
                {"dropout", nullptr},
                {"byte_fallback", false},
                {"vocab", vocab},
                {"merges", Json::array({Json::array({"a", "a"}), Json::array({"aa", "a"}),
                                        Json::array({"a", "b"})})}}}};
}

Tokenizer Load(const Json& json) { return Tokenizer::FromJson(json.dump(), "t.json"); }

std::string LoadErrorOfText(const std::string& text) {
  try {
    Tokenizer::FromJson(text, "t.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    return e.what();
  }
  return "no error";
}

std::string LoadError(const Json& json) { return LoadErrorOfText(json.dump()); }

TEST(TokenizerJsonTest, MergesLowestRankFirstThenLeftmost) {
  const Tokenizer t = Load(TinyTokenizerJson());
  EXPECT_EQ(t.vocab_size(), 261);
  // Leftmost first: a|a|a -> aa|a -> aaa (merging the right pair first would strand a|aa).
  EXPECT_EQ(t.Encode("aaa"), (std::vector<int32_t>{257}));
  EXPECT_EQ(t.Encode("aaaa"), (std::vector<int32_t>{256, 256}));
  // All rank-0 merges before the rank-1 one: aa|aa|a -> aa|aaa.
  EXPECT_EQ(t.Encode("aaaaa"), (std::vector<int32_t>{256, 257}));
  EXPECT_EQ(t.Encode("aab"), (std::vector<int32_t>{256, 'b'}));
  EXPECT_EQ(t.Encode("ab"), (std::vector<int32_t>{258}));
}

TEST(TokenizerJsonTest, AddedTokensMatchLeftmostLongest) {
  const Tokenizer t = Load(TinyTokenizerJson());
  EXPECT_EQ(t.Encode("<ab>"), (std::vector<int32_t>{260}));
  EXPECT_EQ(t.Encode("<a><ab"), (std::vector<int32_t>{259, '<', 258}));
  EXPECT_TRUE(t.IsSpecial(259));
  EXPECT_FALSE(t.IsSpecial(260));
}

TEST(TokenizerJsonTest, AcceptsMergesWrittenAsStrings) {
  Json json = TinyTokenizerJson();
  json["model"]["merges"] = Json::array({"a a", "aa a", "a b"});
  EXPECT_EQ(Load(json).Encode("aaaaab"), (std::vector<int32_t>{256, 257, 'b'}));
}

TEST(TokenizerJsonTest, ReportsMalformedJson) {
  EXPECT_EQ(LoadErrorOfText("{\"model\": "),
            "t.json: malformed JSON near byte 11: [json.exception.parse_error.101] parse error "
            "at line 1, column 11: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(LoadErrorOfText("[1, 2]"), "t.json: expected a JSON object");
  EXPECT_EQ(LoadErrorOfText("").rfind("t.json: malformed JSON near byte 1: ", 0), 0u);
}

TEST(TokenizerJsonTest, ReportsTheFieldAtFault) {
  const auto with = [](const char* pointer, const Json& value) {
    Json json = TinyTokenizerJson();
    json[Json::json_pointer(pointer)] = value;
    return json;
  };
  Json no_model = TinyTokenizerJson();
  no_model.erase("model");
  EXPECT_EQ(LoadError(no_model), "t.json: model is missing");
  EXPECT_EQ(LoadError(with("/model/type", "Unigram")),
            "t.json: model.type must be \"BPE\" (the Qwen2 tokenizer), got \"Unigram\"");
  EXPECT_EQ(LoadError(with("/model/vocab/aa", "x")),
            "t.json: model.vocab[\"aa\"] must be an integer token id");
  EXPECT_EQ(LoadError(with("/model/vocab/aa", -3)),
            "t.json: model.vocab[\"aa\"] = -3 is outside [0, 2097152)");
  EXPECT_EQ(LoadError(with("/model/vocab", Json::array())),
            "t.json: model.vocab must be an object mapping tokens to ids");
  EXPECT_EQ(LoadError(with("/model/merges", Json::object())),
            "t.json: model.merges must be a list of merges");
  EXPECT_EQ(LoadError(with("/model/merges/1", "aa")),
            "t.json: model.merges[1] must be \"left right\" or [\"left\", \"right\"]");
  EXPECT_EQ(LoadError(with("/model/merges/1", Json::array({"aa", "a", "a"}))),
            "t.json: model.merges[1] must be \"left right\" or [\"left\", \"right\"]");
  EXPECT_EQ(LoadError(with("/model/merges/2", Json::array({"a", "zz"}))),
            "t.json: model.merges[2] needs \"zz\", which is not in model.vocab");
  EXPECT_EQ(LoadError(with("/model/merges/2", Json::array({"b", "b"}))),
            "t.json: model.merges[2] needs \"bb\", which is not in model.vocab");
  EXPECT_EQ(LoadError(with("/model/byte_fallback", true)),
            "t.json: model.byte_fallback = true is not supported");
  EXPECT_EQ(LoadError(with("/normalizer/type", "NFKC")),
            "t.json: normalizer.type must be \"NFC\" (the Qwen2 tokenizer), got \"NFKC\"");
  EXPECT_EQ(LoadError(with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "\\s+")),
            "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex is not the Qwen2 split "
            "regex, the only one qvl implements");
  EXPECT_EQ(LoadError(with("/pre_tokenizer/pretokenizers/1/use_regex", true)),
            "t.json: pre_tokenizer.pretokenizers[1].use_regex = true is not supported");
  EXPECT_EQ(LoadError(with("/decoder/type", "WordPiece")),
            "t.json: decoder.type must be \"ByteLevel\" (the Qwen2 tokenizer), got "
            "\"WordPiece\"");
  EXPECT_EQ(LoadError(with("/added_tokens/0/lstrip", true)),
            "t.json: added_tokens[0].lstrip = true is not supported");
  EXPECT_EQ(LoadError(with("/added_tokens/1/content", "")),
            "t.json: added_tokens[1].content must not be empty");
  EXPECT_EQ(LoadError(with("/added_tokens/1/id", 99999999)),
            "t.json: added_tokens[1].id must be an integer in [0, 2097152)");
  EXPECT_EQ(LoadError(with("/added_tokens/1/id", 258)),
            "t.json: added_tokens[1] reuses id 258 of \"ab\"");
}

TEST(TokenizerJsonTest, ReportsInconsistentVocabularies) {
  Json missing_byte = TinyTokenizerJson();
  missing_byte["model"]["vocab"].erase(ByteName(0));
  EXPECT_EQ(LoadError(missing_byte), "t.json: model.vocab lacks the token \"\xC4\x80\" of byte 0");
  Json shared_id = TinyTokenizerJson();
  shared_id["model"]["vocab"]["zz"] = 97;
  EXPECT_EQ(LoadError(shared_id), "t.json: model.vocab gives id 97 to both \"a\" and \"zz\"");
}

}  // namespace
}  // namespace qvl
