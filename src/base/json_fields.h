// Typed access to the fields of a parsed JSON file of a model (config.json, index files,
// preprocessor_config.json), turning every malformed, missing or mistyped field into one
// Error(kCorrupt) line that names the file and the dotted field path: "config.json:
// text_config.head_dim must be an integer, got string". A client's request is read with
// server/request_fields.h instead: its errors are the client's (FieldError, 400).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

// Parses `text`; throws Error(kCorrupt) "SOURCE: malformed JSON: ..." on a syntax error.
nlohmann::json ParseJsonText(std::string_view text, const std::string& source);

// "string", "integer", "object", ... as a user would call the JSON type.
const char* JsonTypeName(const nlohmann::json& value);

// A view of one JSON object inside a document. A field holding null counts as absent.
class JsonFieldReader {
 public:
  // `object` must outlive the reader; throws unless it is a JSON object.
  JsonFieldReader(const nlohmann::json& object, const std::string& source, std::string path);

  const std::string& source() const { return source_; }
  // Dotted path of a field of this object: "text_config.rope_scaling".
  std::string FieldName(std::string_view key) const;
  bool Has(std::string_view key) const;
  const nlohmann::json* Find(std::string_view key) const;

  // Required fields throw "SOURCE: FIELD is missing"; integers must be JSON integers
  // within [min, max].
  int64_t Int(std::string_view key, int64_t min, int64_t max) const;
  std::optional<int64_t> OptionalInt(std::string_view key, int64_t min, int64_t max) const;
  double Number(std::string_view key) const;
  std::optional<double> OptionalNumber(std::string_view key) const;
  bool OptionalBool(std::string_view key, bool fallback) const;
  std::string String(std::string_view key) const;
  std::optional<std::string> OptionalString(std::string_view key) const;
  JsonFieldReader Object(std::string_view key) const;
  std::optional<JsonFieldReader> OptionalObject(std::string_view key) const;
  std::vector<int64_t> IntList(std::string_view key, int64_t min, int64_t max) const;
  // An integer or a list of integers (eos_token_id); empty when absent.
  std::vector<int64_t> IntOrIntList(std::string_view key, int64_t min, int64_t max) const;

  [[noreturn]] void FailField(std::string_view key, const std::string& problem) const;

 private:
  const nlohmann::json& Require(std::string_view key) const;
  int64_t ToInt(std::string_view key, const nlohmann::json& value, int64_t min, int64_t max) const;

  const nlohmann::json* object_;
  std::string source_;
  std::string path_;
};

}  // namespace qvl
