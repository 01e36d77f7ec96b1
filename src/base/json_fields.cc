#include "base/json_fields.h"

#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/error.h"

namespace qvl {
namespace {

using nlohmann::json;

// Deeper nesting than any config or header needs; bounds the parser's memory and stack.
constexpr int kMaxJsonDepth = 64;

}  // namespace

json ParseJsonText(std::string_view text, const std::string& source) {
  // One key set per open object, to refuse duplicate keys (the last one would silently win).
  std::vector<std::set<std::string>> keys;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event,
                                            json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        [[fallthrough]];
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) {
          Fail(ErrorCode::kCorrupt, source, ": malformed JSON: nested deeper than ", kMaxJsonDepth,
               " levels");
        }
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
          Fail(ErrorCode::kCorrupt, source, ": malformed JSON: duplicate key \"",
               parsed.get<std::string>(), "\"");
        }
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::exception& e) {
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    const size_t close = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    Fail(ErrorCode::kCorrupt, source, ": malformed JSON: ", what);
  }
}

const char* JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "binary";
  }
}

JsonFieldReader::JsonFieldReader(const json& object, const std::string& source, std::string path)
    : object_(&object), source_(source), path_(std::move(path)) {
  if (!object.is_object()) {
    if (path_.empty()) {
      Fail(ErrorCode::kCorrupt, source_, ": expected a JSON object, got ", JsonTypeName(object));
    }
    Fail(ErrorCode::kCorrupt, source_, ": ", path_, " must be an object, got ",
         JsonTypeName(object));
  }
}

std::string JsonFieldReader::FieldName(std::string_view key) const {
  return path_.empty() ? std::string(key) : StrCat(path_, ".", key);
}

const json* JsonFieldReader::Find(std::string_view key) const {
  const auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonFieldReader::Has(std::string_view key) const { return Find(key) != nullptr; }

void JsonFieldReader::FailField(std::string_view key, const std::string& problem) const {
  Fail(ErrorCode::kCorrupt, source_, ": ", FieldName(key), " ", problem);
}

const json& JsonFieldReader::Require(std::string_view key) const {
  const json* value = Find(key);
  if (value == nullptr) FailField(key, "is missing");
  return *value;
}

int64_t JsonFieldReader::ToInt(std::string_view key, const json& value, int64_t min,
                               int64_t max) const {
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
    FailField(key, StrCat("is ", value.get<uint64_t>(), ", must be between ", min, " and ", max));
  }
  if (!value.is_number_integer()) {
    FailField(key, StrCat("must be an integer, got ", JsonTypeName(value)));
  }
  const int64_t v = value.get<int64_t>();
  if (v < min || v > max) FailField(key, StrCat("is ", v, ", must be between ", min, " and ", max));
  return v;
}

int64_t JsonFieldReader::Int(std::string_view key, int64_t min, int64_t max) const {
  return ToInt(key, Require(key), min, max);
}

std::optional<int64_t> JsonFieldReader::OptionalInt(std::string_view key, int64_t min,
                                                    int64_t max) const {
  const json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  return ToInt(key, *value, min, max);
}

double JsonFieldReader::Number(std::string_view key) const {
  const json& value = Require(key);
  if (!value.is_number()) FailField(key, StrCat("must be a number, got ", JsonTypeName(value)));
  return value.get<double>();
}

std::optional<double> JsonFieldReader::OptionalNumber(std::string_view key) const {
  if (!Has(key)) return std::nullopt;
  return Number(key);
}

bool JsonFieldReader::OptionalBool(std::string_view key, bool fallback) const {
  const json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    FailField(key, StrCat("must be true or false, got ", JsonTypeName(*value)));
  }
  return value->get<bool>();
}

std::string JsonFieldReader::String(std::string_view key) const {
  const json& value = Require(key);
  if (!value.is_string()) FailField(key, StrCat("must be a string, got ", JsonTypeName(value)));
  return value.get<std::string>();
}

std::optional<std::string> JsonFieldReader::OptionalString(std::string_view key) const {
  if (!Has(key)) return std::nullopt;
  return String(key);
}

JsonFieldReader JsonFieldReader::Object(std::string_view key) const {
  return JsonFieldReader(Require(key), source_, FieldName(key));
}

std::optional<JsonFieldReader> JsonFieldReader::OptionalObject(std::string_view key) const {
  if (!Has(key)) return std::nullopt;
  return Object(key);
}

std::vector<int64_t> JsonFieldReader::IntList(std::string_view key, int64_t min,
                                              int64_t max) const {
  const json& value = Require(key);
  if (!value.is_array()) {
    FailField(key, StrCat("must be a list of integers, got ", JsonTypeName(value)));
  }
  std::vector<int64_t> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    out.push_back(ToInt(StrCat(key, "[", i, "]"), value[i], min, max));
  }
  return out;
}

std::vector<int64_t> JsonFieldReader::IntOrIntList(std::string_view key, int64_t min,
                                                   int64_t max) const {
  const json* value = Find(key);
  if (value == nullptr) return {};
  if (value->is_array()) return IntList(key, min, max);
  if (!value->is_number_integer()) {
    FailField(key, StrCat("must be an integer or a list of integers, got ", JsonTypeName(*value)));
  }
  return {ToInt(key, *value, min, max)};
}

}  // namespace qvl
