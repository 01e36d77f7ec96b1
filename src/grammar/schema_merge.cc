#include "grammar/schema_merge.h"

#include <algorithm>
#include <set>
#include <vector>

#include "base/field_error.h"

namespace qvl::grammar {
namespace {

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::vector<std::string> TypeList(const OrderedJson& type) {
  std::vector<std::string> out;
  if (type.is_string()) {
    out.push_back(type.get<std::string>());
  } else if (type.is_array()) {
    for (const OrderedJson& t : type) {
      if (t.is_string()) out.push_back(t.get<std::string>());
    }
  }
  return out;
}

OrderedJson IntersectTypes(const OrderedJson& a, const OrderedJson& b, const std::string& path) {
  const std::vector<std::string> x = TypeList(a), y = TypeList(b);
  OrderedJson out = OrderedJson::array();
  for (const std::string& t : x) {
    for (const std::string& u : y) {
      if (t == u || (t == "integer" && u == "number")) {
        out.push_back(t);
      } else if (t == "number" && u == "integer") {
        out.push_back(u);
      }
    }
  }
  if (out.empty())
    FailField(ErrorCode::kInvalidArgument, path, "the types of allOf do not intersect");
  return out;
}

// A part whose additionalProperties is not `true` rejects the other part's properties
// that it does not list itself; a merged schema could not say so.
void CheckAdditional(const OrderedJson& part, const OrderedJson& other, const std::string& path) {
  if (!part.contains("additionalProperties") || part["additionalProperties"] == true) return;
  if (!other.contains("properties") || !other["properties"].is_object()) return;
  for (const auto& [name, unused] : other["properties"].items()) {
    if (!part.contains("properties") || !part["properties"].contains(name)) {
      FailField(ErrorCode::kInvalidArgument, Join(path, "additionalProperties"),
                "allOf parts with additionalProperties that reject the properties of another "
                "part are not supported");
    }
  }
}

}  // namespace

bool IsAnnotation(const std::string& keyword) {
  static const std::set<std::string> kAnnotations = {
      "title",    "description", "examples", "default",   "$schema",         "$id",
      "$comment", "deprecated",  "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
      "$defs",    "definitions", "$anchor"};
  return kAnnotations.count(keyword) > 0 || keyword.rfind("x-", 0) == 0;
}

OrderedJson MergeSchemas(const OrderedJson& a, const OrderedJson& b, const std::string& path) {
  if (b.is_boolean()) {
    if (b.get<bool>()) return a;
    FailField(ErrorCode::kInvalidArgument, path, "a false schema matches nothing");
  }
  if (a.is_boolean()) {
    if (a.get<bool>()) return b;
    FailField(ErrorCode::kInvalidArgument, path, "a false schema matches nothing");
  }
  if (!a.is_object() || !b.is_object()) {
    FailField(ErrorCode::kInvalidArgument, path, "a schema must be an object or a boolean");
  }
  CheckAdditional(a, b, path);
  CheckAdditional(b, a, path);
  OrderedJson out = a;
  for (const auto& [key, value] : b.items()) {
    if (IsAnnotation(key)) continue;
    if (!out.contains(key)) {
      out[key] = value;
      continue;
    }
    OrderedJson& mine = out[key];
    const std::string at = Join(path, key);
    if (mine == value) continue;
    if (key == "type") {
      mine = IntersectTypes(mine, value, at);
    } else if (key == "required" && mine.is_array() && value.is_array()) {
      for (const OrderedJson& name : value) {
        if (std::find(mine.begin(), mine.end(), name) == mine.end()) mine.push_back(name);
      }
    } else if (key == "properties" && mine.is_object() && value.is_object()) {
      for (const auto& [name, schema] : value.items()) {
        if (mine.contains(name)) {
          mine[name] = OrderedJson{{"allOf", OrderedJson::array({mine[name], schema})}};
        } else {
          mine[name] = schema;
        }
      }
    } else if ((key == "items" || key == "additionalProperties") && !mine.is_array() &&
               !value.is_array()) {
      mine = OrderedJson{{"allOf", OrderedJson::array({mine, value})}};
    } else if ((key == "minLength" || key == "minItems" || key == "minimum" ||
                key == "exclusiveMinimum") &&
               mine.is_number() && value.is_number()) {
      if (value > mine) mine = value;
    } else if ((key == "maxLength" || key == "maxItems" || key == "maximum" ||
                key == "exclusiveMaximum") &&
               mine.is_number() && value.is_number()) {
      if (value < mine) mine = value;
    } else if (key == "enum" && mine.is_array() && value.is_array()) {
      OrderedJson both = OrderedJson::array();
      for (const OrderedJson& v : mine) {
        if (std::find(value.begin(), value.end(), v) != value.end()) both.push_back(v);
      }
      if (both.empty())
        FailField(ErrorCode::kInvalidArgument, at, "the enums of allOf share no value");
      mine = both;
    } else if (key == "allOf" && mine.is_array() && value.is_array()) {
      for (const OrderedJson& part : value) mine.push_back(part);
    } else if (key == "nullable") {
      mine = mine == true && value == true;
    } else {
      FailField(ErrorCode::kInvalidArgument, at, "allOf parts with different \"", key,
                "\" cannot be combined");
    }
  }
  return out;
}

}  // namespace qvl::grammar
