#include "hub/model_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

using ::testing::ElementsAre;

const std::vector<std::string> kRealListing = {".gitattributes",
                                               "README.md",
                                               "chat_template.json",
                                               "config.json",
                                               "generation_config.json",
                                               "merges.txt",
                                               "model.safetensors",
                                               "preprocessor_config.json",
                                               "tokenizer.json",
                                               "tokenizer_config.json",
                                               "video_preprocessor_config.json",
                                               "vocab.json"};

TEST(ModelFilesTest, SelectsOnlyWhatTheEngineReads) {
  EXPECT_THAT(SelectModelFiles(kRealListing, "Qwen/Qwen3-VL-2B-Instruct"),
              ElementsAre("config.json", "preprocessor_config.json", "tokenizer.json",
                          "tokenizer_config.json", "generation_config.json", "chat_template.json",
                          "video_preprocessor_config.json", "model.safetensors"));
}

TEST(ModelFilesTest, PrefersSingleFileWeightsAndFallsBackToIndex) {
  std::vector<std::string> sharded = {"config.json", "preprocessor_config.json", "tokenizer.json",
                                      "tokenizer_config.json", "model.safetensors.index.json"};
  EXPECT_EQ(SelectModelFiles(sharded, "a/b").back(), "model.safetensors.index.json");
  sharded.pop_back();
  try {
    SelectModelFiles(sharded, "a/b");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "model a/b has neither model.safetensors nor model.safetensors.index.json; qvl "
                 "reads safetensors weights only");
  }
}

TEST(ModelFilesTest, MissingRequiredFileNamesIt) {
  try {
    SelectModelFiles({"config.json", "model.safetensors"}, "a/b");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_STREQ(e.what(),
                 "model a/b has no preprocessor_config.json; is it a Qwen3-VL model in Hugging "
                 "Face format?");
  }
}

TEST(ModelFilesTest, ShardListAndCompleteness) {
  testing::TestFolder folder;
  for (const char* name : {"config.json", "preprocessor_config.json", "tokenizer.json",
                           "tokenizer_config.json", "model-00001-of-00002.safetensors"}) {
    std::ofstream(folder / name) << "{}";
  }
  std::ofstream(folder / "model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"a":"model-00002-of-00002.safetensors",)"
      << R"("b":"model-00001-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}})";
  EXPECT_THAT(ReadShardList(folder / "model.safetensors.index.json"),
              ElementsAre("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"));
  EXPECT_THAT(MissingModelFiles(folder.path()), ElementsAre("model-00002-of-00002.safetensors"));
  std::ofstream(folder / "model-00002-of-00002.safetensors") << "x";
  EXPECT_TRUE(MissingModelFiles(folder.path()).empty());
  std::filesystem::remove(folder / "tokenizer.json");
  EXPECT_THAT(MissingModelFiles(folder.path()), ElementsAre("tokenizer.json"));
}

TEST(ModelFilesTest, IndexPointingOutsideTheRepoIsRejected) {
  testing::TestFolder folder;
  std::ofstream(folder / "index.json") << R"({"weight_map":{"a":"../../etc/passwd"}})";
  EXPECT_THROW(ReadShardList(folder / "index.json"), Error);
}

}  // namespace
}  // namespace qvl::hub
