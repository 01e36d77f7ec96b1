// JSON text exactly as the chat template's `tojson` filter writes it (transformers:
// Python's json.dumps with ensure_ascii=False): ", " between items, ": " after keys,
// keys in the order given, non-ASCII characters as they are. Tool definitions go into
// the prompt this way, so the model sees the bytes the reference would show it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace qvl {

std::string TemplateJson(const nlohmann::ordered_json& value);

}  // namespace qvl
