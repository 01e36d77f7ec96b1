#include "model/model_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"
#include "base/mapped_file.h"
#include "model/safetensors.h"

namespace qvl {
namespace {

// False when nothing is at `path`. Throws Error(kIo) naming the path when it cannot be
// looked at (a folder without permission): "missing" would send the user looking for a
// file that is there.
bool Exists(const std::string& path, struct stat* st) {
  if (::stat(path.c_str(), st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  Fail(ErrorCode::kIo, "cannot read ", path, ": ", std::strerror(errno));
}

bool IsFile(const std::string& path) {
  struct stat st;
  return Exists(path, &st) && S_ISREG(st.st_mode);
}

std::string RequireFile(const std::string& dir, const char* name, const char* purpose) {
  const std::string path = dir + "/" + name;
  struct stat st;
  if (!Exists(path, &st))
    Fail(ErrorCode::kNotFound, dir, ": ", name, " is missing (", purpose, ")");
  if (!S_ISREG(st.st_mode)) {
    Fail(ErrorCode::kCorrupt, path, ": is not a regular file (", purpose, ")");
  }
  return path;
}

// True when `path` is a JSON object whose "chat_template" field is a string or a list
// of named templates (both forms occur); a malformed file is an error.
bool HasChatTemplateField(const std::string& path) {
  const nlohmann::json doc = ParseJsonText(ReadFileToString(path), path);
  const JsonFieldReader r(doc, path, "");
  const nlohmann::json* t = r.Find("chat_template");
  if (t == nullptr) return false;
  if (!t->is_string() && !t->is_array()) {
    r.FailField("chat_template", StrCat("must be a string or a list, got ", JsonTypeName(*t)));
  }
  return true;
}

}  // namespace

std::string FindChatTemplatePath(const std::string& dir) {
  const std::string jinja = dir + "/chat_template.jinja";
  if (IsFile(jinja)) return jinja;
  const std::string json = dir + "/chat_template.json";
  if (IsFile(json)) {
    if (!HasChatTemplateField(json)) {
      Fail(ErrorCode::kCorrupt, json, ": chat_template is missing");
    }
    return json;
  }
  const std::string tokenizer_config = dir + "/tokenizer_config.json";
  if (IsFile(tokenizer_config) && HasChatTemplateField(tokenizer_config)) return tokenizer_config;
  Fail(ErrorCode::kNotFound, dir,
       ": no chat template (chat_template.jinja, chat_template.json, or a chat_template field "
       "in tokenizer_config.json)");
}

ModelFolder OpenModelFolder(const std::string& dir_arg) {
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st;
  if (!Exists(dir, &st) || !S_ISDIR(st.st_mode)) {
    Fail(ErrorCode::kNotFound, dir, ": no such model folder");
  }
  ModelFolder f;
  f.dir = dir;
  f.config_path = RequireFile(dir, "config.json", "model hyper-parameters");
  f.config = LoadModelConfig(f.config_path);
  const std::string generation = dir + "/generation_config.json";
  if (IsFile(generation)) f.generation_config_path = generation;
  f.generation = LoadGenerationConfig(generation, f.config);
  f.tokenizer_path = RequireFile(dir, "tokenizer.json", "the tokenizer vocabulary and merges");
  f.tokenizer_config_path =
      RequireFile(dir, "tokenizer_config.json", "special tokens of the tokenizer");
  f.chat_template_path = FindChatTemplatePath(dir);
  f.preprocessor_config_path =
      RequireFile(dir, "preprocessor_config.json", "image resize and normalization settings");
  const std::string& pre = f.preprocessor_config_path;
  const nlohmann::json preprocessor = ParseJsonText(ReadFileToString(pre), pre);
  if (!preprocessor.is_object()) {
    Fail(ErrorCode::kCorrupt, pre, ": expected a JSON object, got ", JsonTypeName(preprocessor));
  }
  f.weight_files = FindWeightFiles(dir);
  return f;
}

}  // namespace qvl
