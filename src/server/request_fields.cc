#include "server/request_fields.h"

#include <cmath>

#include "base/field_error.h"

namespace qvl {

const char* JsonKind(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "object";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "integer";
    case nlohmann::json::value_t::number_float:
      return "number";
    default:
      return "binary";
  }
}

std::string JoinField(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return StrCat(parent, ".", key);
}

std::string IndexField(std::string_view parent, size_t index) {
  return StrCat(parent, "[", index, "]");
}

RequestObject::RequestObject(const nlohmann::json& value, std::string path)
    : object_(&value), path_(std::move(path)) {
  if (!value.is_object()) {
    FailField(ErrorCode::kInvalidArgument, path_, "expected an object, got ", JsonKind(value));
  }
}

const nlohmann::json* RequestObject::Find(std::string_view key) const {
  const auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<bool> RequestObject::Bool(std::string_view key) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    FailField(ErrorCode::kInvalidArgument, Field(key), "expected true or false, got ",
              JsonKind(*v));
  }
  return v->get<bool>();
}

std::optional<int64_t> RequestObject::Int(std::string_view key, int64_t min, int64_t max) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  int64_t n = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      FailField(ErrorCode::kInvalidArgument, Field(key), "must be at most ", max, ", got ",
                v->dump());
    }
    n = v->get<int64_t>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!(std::floor(d) == d) || std::fabs(d) > 9.0e15) {
      FailField(ErrorCode::kInvalidArgument, Field(key), "expected an integer, got ", v->dump());
    }
    n = static_cast<int64_t>(d);
  } else {
    FailField(ErrorCode::kInvalidArgument, Field(key), "expected an integer, got ", JsonKind(*v));
  }
  if (n < min || n > max) {
    FailField(ErrorCode::kInvalidArgument, Field(key), "must be between ", min, " and ", max,
              ", got ", n);
  }
  return n;
}

std::optional<double> RequestObject::Number(std::string_view key, double min, double max,
                                            bool min_exclusive) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    FailField(ErrorCode::kInvalidArgument, Field(key), "expected a number, got ", JsonKind(*v));
  }
  const double d = v->get<double>();
  const bool below = min_exclusive ? !(d > min) : !(d >= min);
  if (below || !(d <= max)) {
    FailField(ErrorCode::kInvalidArgument, Field(key), "must be ",
              min_exclusive ? "greater than " : "between ", min,
              min_exclusive ? " and at most " : " and ", max, ", got ", v->dump());
  }
  return d;
}

std::optional<std::string> RequestObject::String(std::string_view key) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    FailField(ErrorCode::kInvalidArgument, Field(key), "expected a string, got ", JsonKind(*v));
  }
  return v->get<std::string>();
}

std::string RequestObject::RequiredString(std::string_view key) const {
  std::optional<std::string> s = String(key);
  if (!s) FailField(ErrorCode::kInvalidArgument, Field(key), "is required");
  return *std::move(s);
}

void RequireArray(const nlohmann::json& value, std::string_view field) {
  if (!value.is_array()) {
    FailField(ErrorCode::kInvalidArgument, field, "expected an array, got ", JsonKind(value));
  }
}

}  // namespace qvl
