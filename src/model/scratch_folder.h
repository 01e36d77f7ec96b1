// Test support: throw-away folders, and copies of the tiny fixture model to break in
// one place. Header-only; used by the tests of src/model only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/mapped_file.h"

namespace qvl {

inline const std::string kTinyModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";

// A fresh empty folder under the test temp dir, removed with its contents on destruction.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& name) {
    std::string root = ::testing::TempDir();
    if (root.empty() || root.back() != '/') root += '/';
    path_ = root + "qvl_" + name + "_" + std::to_string(::getpid());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void Write(const std::string& name, const std::string& contents) const {
    WriteFileAtomically(File(name), contents);
  }
  void Remove(const std::string& name) const { std::filesystem::remove(File(name)); }

  // Links every file of the tiny fixture model into this folder, except `skip`.
  void LinkTinyModel(const std::vector<std::string>& skip = {}) const {
    for (const auto& entry : std::filesystem::directory_iterator(kTinyModelDir)) {
      const std::string name = entry.path().filename();
      bool skipped = false;
      for (const std::string& s : skip) skipped = skipped || s == name;
      if (!skipped) std::filesystem::create_symlink(entry.path(), File(name));
    }
  }

 private:
  std::string path_;
};

}  // namespace qvl
