// Tests only: a copy of a model folder (symbolic links to its files) with one file
// replaced, for checking what depends on that file.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace qvl {

// `dir` with `file` holding `text` instead, under the test's temporary folder.
inline std::string ModelFolderWith(const std::string& dir, const std::string& file,
                                   const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path copy = fs::path(::testing::TempDir()) /
                        ("model_with_" + fs::path(dir).filename().string() + "_" + file);
  fs::remove_all(copy);
  fs::create_directories(copy);
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const fs::path name = entry.path().filename();
    if (name != file) fs::create_symlink(fs::absolute(entry.path()), copy / name);
  }
  std::ofstream(copy / file) << text;
  return copy.string();
}

// `dir` with the Qwen3-VL Thinking models' chat template (tests/data/qwen3vl-thinking), so
// that a model folder serves as a Thinking model.
inline std::string ThinkingModelFolder(const std::string& dir) {
  std::ifstream in(std::string(QVL_TEST_DATA) + "/qwen3vl-thinking/chat_template.json");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_FALSE(text.empty()) << "the Thinking template is missing from " << QVL_TEST_DATA;
  return ModelFolderWith(dir, "chat_template.json", text);
}

}  // namespace qvl
