// Finding a model folder's chat template and checking it is the one implemented in
// chat_template.cc.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "base/mapped_file.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

// FNV-1a of the Qwen3-VL templates after NormalizeTemplate: Instruct (the template of
// Qwen/Qwen3-VL-2B-Instruct, also in tests/data/tiny-qwen3vl/model/chat_template.json)
// and Thinking (Qwen/Qwen3-VL-2B-Thinking and its siblings, in
// tests/data/qwen3vl-thinking/chat_template.json, whose README says where it came from).
constexpr uint64_t kQwen3VlInstructTemplateHash = 0x99AC253185D6F7C1;
constexpr uint64_t kQwen3VlThinkingTemplateHash = 0x32334D10195D5F66;

std::string NormalizeTemplate(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out.push_back(text[i]);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t')) {
    out.pop_back();
  }
  return out;
}

std::string Hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (const char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

Json ReadJsonFile(const std::string& path) {
  const std::string text = ReadFileToString(path);
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) Fail(ErrorCode::kCorrupt, path, ": malformed JSON");
  if (!json.is_object()) Fail(ErrorCode::kCorrupt, path, ": expected a JSON object");
  return json;
}

// tokenizer_config.json may hold one template or a list of {"name", "template"}, where
// transformers uses the one named "default".
std::optional<std::string> TemplateFromTokenizerConfig(const Json& config,
                                                       const std::string& path) {
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    // Entries of other shapes (a name or template that is not a string) are skipped:
    // nlohmann's value() would throw a type_error, not a qvl::Error, on them.
    const auto is_string = [](const Json& entry, const char* key) {
      const auto field = entry.find(key);
      return field != entry.end() && field->is_string();
    };
    for (const Json& entry : *it) {
      if (entry.is_object() && is_string(entry, "name") && entry["name"] == "default" &&
          is_string(entry, "template")) {
        return entry["template"].get<std::string>();
      }
    }
    Fail(ErrorCode::kCorrupt, path, ": chat_template lists no template named \"default\"");
  }
  Fail(ErrorCode::kCorrupt, path, ": chat_template must be a string or a list of templates");
}

}  // namespace

ChatTemplateFile FindChatTemplate(const std::string& model_dir) {
  const std::filesystem::path dir(model_dir);
  if (const auto path = (dir / "chat_template.jinja").string(); std::filesystem::exists(path)) {
    return {ReadFileToString(path), path};
  }
  if (const auto path = (dir / "chat_template.json").string(); std::filesystem::exists(path)) {
    const Json json = ReadJsonFile(path);
    const auto it = json.find("chat_template");
    if (it == json.end() || !it->is_string()) {
      Fail(ErrorCode::kCorrupt, path, ": chat_template must be a string");
    }
    return {it->get<std::string>(), path};
  }
  if (const auto path = (dir / "tokenizer_config.json").string(); std::filesystem::exists(path)) {
    if (std::optional<std::string> text = TemplateFromTokenizerConfig(ReadJsonFile(path), path)) {
      return {std::move(*text), path};
    }
  }
  Fail(ErrorCode::kNotFound, model_dir,
       ": no chat template (looked in chat_template.jinja, chat_template.json and "
       "tokenizer_config.json)");
}

ChatTemplateKind CheckChatTemplate(std::string_view template_text, const std::string& source) {
  const uint64_t hash = Fnv1a(NormalizeTemplate(template_text));
  if (hash == kQwen3VlInstructTemplateHash) return ChatTemplateKind::kInstruct;
  if (hash == kQwen3VlThinkingTemplateHash) return ChatTemplateKind::kThinking;
  Fail(ErrorCode::kInvalidArgument, source,
       ": the chat template is neither of the Qwen3-VL templates qvl implements (hash ", Hex(hash),
       ", expected ", Hex(kQwen3VlInstructTemplateHash), " for Instruct or ",
       Hex(kQwen3VlThinkingTemplateHash),
       " for Thinking); prompts would not match what this model expects");
}

}  // namespace qvl
