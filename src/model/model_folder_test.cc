#include "model/model_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/mapped_file.h"
#include "model/scratch_folder.h"

namespace qvl {
namespace {

// Opens the folder and returns "CODE: message", or "" when it opens.
std::string OpenError(const std::string& dir) {
  try {
    OpenModelFolder(dir);
  } catch (const Error& e) {
    return StrCat(ErrorCodeName(e.code()), ": ", e.what());
  }
  return "";
}

TEST(ModelFolder, OpensTheTinyFixture) {
  const ModelFolder f = OpenModelFolder(kTinyModelDir + "/");
  EXPECT_EQ(f.dir, kTinyModelDir);
  EXPECT_EQ(f.config.text.hidden_size, 64);
  EXPECT_EQ(f.generation.top_k, 20);
  EXPECT_EQ(f.config_path, kTinyModelDir + "/config.json");
  EXPECT_EQ(f.generation_config_path, kTinyModelDir + "/generation_config.json");
  EXPECT_EQ(f.tokenizer_path, kTinyModelDir + "/tokenizer.json");
  EXPECT_EQ(f.tokenizer_config_path, kTinyModelDir + "/tokenizer_config.json");
  EXPECT_EQ(f.chat_template_path, kTinyModelDir + "/chat_template.json");
  EXPECT_EQ(f.preprocessor_config_path, kTinyModelDir + "/preprocessor_config.json");
  EXPECT_EQ(f.weight_files, (std::vector<std::string>{kTinyModelDir + "/model.safetensors"}));
}

TEST(ModelFolder, NamesEachMissingFile) {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"config.json", ": config.json is missing (model hyper-parameters)"},
      {"tokenizer.json", ": tokenizer.json is missing (the tokenizer vocabulary and merges)"},
      {"tokenizer_config.json",
       ": tokenizer_config.json is missing (special tokens of the tokenizer)"},
      {"preprocessor_config.json",
       ": preprocessor_config.json is missing (image resize and normalization settings)"},
      {"model.safetensors",
       ": no model weights (neither model.safetensors nor model.safetensors.index.json)"},
  };
  for (const Case& c : cases) {
    ScratchFolder dir("folder_missing");
    dir.LinkTinyModel({c.file});
    EXPECT_EQ(OpenError(dir.path()), "not_found: " + dir.path() + c.message);
  }
  EXPECT_EQ(OpenError("/nonexistent/model"), "not_found: /nonexistent/model: no such model folder");
}

// Said "config.json is missing" for both, sending the user looking for a file that is
// there.
TEST(ModelFolder, AnUnreadableFolderOrAFolderInPlaceOfAFileIsNamedAsSuch) {
  ScratchFolder dir("folder_unreadable");
  dir.LinkTinyModel({"config.json"});
  std::filesystem::create_directory(dir.File("config.json"));
  EXPECT_EQ(OpenError(dir.path()), "corrupt: " + dir.File("config.json") +
                                       ": is not a regular file (model hyper-parameters)");
  // Any reason stat gives but "no such file" is named, for root too.
  std::filesystem::remove(dir.File("config.json"));
  std::filesystem::create_symlink("config.json", dir.File("config.json"));
  EXPECT_EQ(OpenError(dir.path()),
            "io: cannot read " + dir.File("config.json") + ": Too many levels of symbolic links");
  std::filesystem::remove(dir.File("config.json"));
  std::filesystem::create_symlink(kTinyModelDir + "/config.json", dir.File("config.json"));
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every folder";
  ASSERT_EQ(::chmod(dir.path().c_str(), 0), 0);
  const std::string error = OpenError(dir.path());
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(error, "io: cannot read " + dir.File("config.json") + ": Permission denied");
}

TEST(ModelFolder, GenerationConfigIsOptional) {
  ScratchFolder dir("folder_no_generation");
  dir.LinkTinyModel({"generation_config.json"});
  const ModelFolder f = OpenModelFolder(dir.path());
  EXPECT_EQ(f.generation_config_path, "");
  EXPECT_EQ(f.generation.eos_token_ids, (std::vector<int32_t>{151645}));
}

TEST(ModelFolder, FindsTheChatTemplate) {
  ScratchFolder dir("folder_template");
  dir.LinkTinyModel({"chat_template.json"});
  // The fixture's tokenizer_config.json carries the template too.
  EXPECT_EQ(OpenModelFolder(dir.path()).chat_template_path, dir.File("tokenizer_config.json"));
  dir.Write("chat_template.jinja", "{{ messages }}");
  EXPECT_EQ(OpenModelFolder(dir.path()).chat_template_path, dir.File("chat_template.jinja"));
  dir.Remove("chat_template.jinja");

  nlohmann::json tokenizer_config =
      nlohmann::json::parse(ReadFileToString(kTinyModelDir + "/tokenizer_config.json"));
  tokenizer_config.erase("chat_template");
  dir.Write("tokenizer_config.json", tokenizer_config.dump());
  EXPECT_EQ(OpenError(dir.path()),
            "not_found: " + dir.path() +
                ": no chat template (chat_template.jinja, chat_template.json, or a chat_template "
                "field in tokenizer_config.json)");
  dir.Write("chat_template.json", R"({"template": "x"})");
  EXPECT_EQ(OpenError(dir.path()),
            "corrupt: " + dir.File("chat_template.json") + ": chat_template is missing");
}

TEST(ModelFolder, CorruptFiles) {
  ScratchFolder dir("folder_corrupt");
  dir.LinkTinyModel();
  dir.Write("config.json", "{\"model_type\": \"qwen3_vl\"");
  EXPECT_EQ(
      OpenError(dir.path()).rfind("corrupt: " + dir.File("config.json") + ": malformed JSON: ", 0),
      0u);

  nlohmann::json config = nlohmann::json::parse(ReadFileToString(kTinyModelDir + "/config.json"));
  config["vision_config"].erase("patch_size");
  dir.Write("config.json", config.dump());
  EXPECT_EQ(OpenError(dir.path()),
            "corrupt: " + dir.File("config.json") + ": vision_config.patch_size is missing");

  dir.Remove("config.json");
  dir.LinkTinyModel({"chat_template.json", "generation_config.json", "model.safetensors",
                     "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json",
                     "video_preprocessor_config.json"});
  dir.Write("preprocessor_config.json", "[]");
  EXPECT_EQ(OpenError(dir.path()), "corrupt: " + dir.File("preprocessor_config.json") +
                                       ": expected a JSON object, got array");
}

}  // namespace
}  // namespace qvl
