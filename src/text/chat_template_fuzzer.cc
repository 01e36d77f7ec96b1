// libFuzzer target: chat template loading. The first byte picks the file the rest
// becomes in a scratch model folder: chat_template.jinja, chat_template.json or
// tokenizer_config.json; FindChatTemplate reads it and CheckChatTemplate judges what it
// found. Only qvl::Error may come out.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "text/chat_template.h"

namespace {

constexpr const char* kFiles[] = {"chat_template.jinja", "chat_template.json",
                                  "tokenizer_config.json"};

// Removed when the fuzzer exits.
const std::string& ScratchFolder() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != 0 ? tmp : "/tmp") +
                          "/qvl_chat_template_fuzzer_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] { std::filesystem::remove_all(*dir); });
    return new std::string(pattern);
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& dir = ScratchFolder();
  const int chosen = data[0] % 3;
  for (int i = 0; i < 3; ++i) {
    const std::string path = dir + "/" + kFiles[i];
    if (i != chosen) {
      ::unlink(path.c_str());
      continue;
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    const qvl::ChatTemplateFile found = qvl::FindChatTemplate(dir);
    if (found.path != dir + "/" + kFiles[chosen]) std::abort();
    qvl::CheckChatTemplate(found.text, found.path);
  } catch (const qvl::Error&) {
  }
  return 0;
}
