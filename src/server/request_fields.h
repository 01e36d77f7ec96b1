// Typed reading of a client's JSON request. Every wrong type or value becomes a
// FieldError(kInvalidArgument) whose field is the full path in the request
// ("messages[1].content[0].image_url.url") and whose message says what was expected
// and what came. A field holding null counts as absent, as OpenAI's API treats it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace qvl {

// "string", "integer", "number", "object", "array", "boolean", "null".
const char* JsonKind(const nlohmann::json& value);

// "messages" + "[1]" -> "messages[1]"; "" + "stop" -> "stop"; "a" + "b" -> "a.b".
std::string JoinField(std::string_view parent, std::string_view key);
std::string IndexField(std::string_view parent, size_t index);

// One JSON object of the request. The object must outlive the reader.
class RequestObject {
 public:
  // Throws unless `value` is an object ("FIELD: expected an object, got array").
  RequestObject(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  std::string Field(std::string_view key) const { return JoinField(path_, key); }
  // The value of `key`, or nullptr when absent or null.
  const nlohmann::json* Find(std::string_view key) const;

  std::optional<bool> Bool(std::string_view key) const;
  // Integers must be JSON integers (2.0 is accepted, 2.5 is not) within [min, max].
  std::optional<int64_t> Int(std::string_view key, int64_t min, int64_t max) const;
  // Numbers within [min, max]; `min_exclusive` makes the lower bound open.
  std::optional<double> Number(std::string_view key, double min, double max,
                               bool min_exclusive = false) const;
  std::optional<std::string> String(std::string_view key) const;
  std::string RequiredString(std::string_view key) const;

 private:
  const nlohmann::json* object_;
  std::string path_;
};

// Checks `value` is a JSON array ("FIELD: expected an array, got string").
void RequireArray(const nlohmann::json& value, std::string_view field);

}  // namespace qvl
