#include "share/model_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_folder_for_test.h"

namespace qvl {
namespace {

const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";

std::string IdentityOf(const std::string& dir) {
  ModelOptions options;
  options.weight_cache_dir = "none";
  return ModelIdentity(*Qwen3VLModel::Load(dir, options));
}

TEST(ModelIdentity, FollowsTheTokenizerAndChatTemplateAsWellAsTheWeights) {
  const std::string base = IdentityOf(kModelDir);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(IdentityOf(kModelDir), base);

  // The same template with one more (empty) statement renders other prompts' bytes
  // nowhere, but it is another file: answers shared between replicas must not mix.
  nlohmann::json tmpl;
  std::ifstream(kModelDir + "/chat_template.json") >> tmpl;
  tmpl["chat_template"] = tmpl["chat_template"].get<std::string>() + "{{- '' }}";
  EXPECT_NE(IdentityOf(ModelFolderWith(kModelDir, "chat_template.json", tmpl.dump())), base);

  nlohmann::json tokenizer_config;
  std::ifstream(kModelDir + "/tokenizer_config.json") >> tokenizer_config;
  tokenizer_config["model_max_length"] = 1234;
  EXPECT_NE(
      IdentityOf(ModelFolderWith(kModelDir, "tokenizer_config.json", tokenizer_config.dump())),
      base);
}

}  // namespace
}  // namespace qvl
