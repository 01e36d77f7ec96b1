#include "grammar/schema_compiler.h"

#include <cmath>
#include <optional>
#include <set>

#include "base/field_error.h"
#include "grammar/pattern_grammar.h"
#include "grammar/string_formats.h"

namespace qvl::grammar {
namespace {

// Deeper schemas are refused rather than risking the compiler's stack.
constexpr int kMaxDepth = 64;
// Integer bounds past this many digits are refused (they do not fit the digit grammar).
constexpr double kMaxBound = 1e15;

enum Type : unsigned {
  kNull = 1,
  kBoolean = 2,
  kInteger = 4,
  kNumber = 8,
  kString = 16,
  kArray = 32,
  kObject = 64,
  kAllTypes = 127
};

const std::set<std::string> kObjectKeywords = {"properties", "required", "additionalProperties"};
const std::set<std::string> kArrayKeywords = {"items",    "prefixItems",     "minItems",
                                              "maxItems", "additionalItems", "uniqueItems"};
const std::set<std::string> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                               "exclusiveMaximum"};
const std::set<std::string> kGeneralKeywords = {"type",  "enum",  "const", "anyOf",
                                                "oneOf", "allOf", "$ref",  "nullable"};

bool IsConstraint(const std::string& key) { return !IsAnnotation(key); }

OrderedJson WithoutKeys(const OrderedJson& schema, std::initializer_list<const char*> keys) {
  OrderedJson out = OrderedJson::object();
  for (const auto& [key, value] : schema.items()) {
    bool drop = IsAnnotation(key);
    for (const char* k : keys) drop = drop || key == k;
    if (!drop) out[key] = value;
  }
  return out;
}

unsigned TypeBits(const OrderedJson& schema, const std::string& path) {
  if (!schema.contains("type")) {
    unsigned bits = 0;
    for (const auto& [key, unused] : schema.items()) {
      if (kObjectKeywords.count(key)) bits |= kObject;
      if (kArrayKeywords.count(key)) bits |= kArray;
      if (kStringKeywords.count(key)) bits |= kString;
      if (kNumberKeywords.count(key)) bits |= kNumber;
    }
    return bits == 0 ? kAllTypes : bits;
  }
  const OrderedJson& type = schema["type"];
  const std::string at = JoinPath(path, "type");
  std::vector<OrderedJson> names;
  if (type.is_array()) {
    if (type.empty()) Refuse(at, "must name at least one type");
    names.assign(type.begin(), type.end());
  } else {
    names.push_back(type);
  }
  unsigned bits = 0;
  for (const OrderedJson& name : names) {
    static const std::pair<const char*, Type> kNames[] = {
        {"null", kNull},     {"boolean", kBoolean}, {"integer", kInteger}, {"number", kNumber},
        {"string", kString}, {"array", kArray},     {"object", kObject}};
    bool known = false;
    for (const auto& [text, bit] : kNames) {
      if (name.is_string() && name.get<std::string>() == text) {
        bits |= bit;
        known = true;
      }
    }
    if (!known) Refuse(at, StrCat("unknown type ", name.dump()));
  }
  if (bits & kNumber) bits &= ~kInteger;
  return bits;
}

bool HasType(const OrderedJson& value, unsigned bits) {
  switch (value.type()) {
    case OrderedJson::value_t::null:
      return bits & kNull;
    case OrderedJson::value_t::boolean:
      return bits & kBoolean;
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned:
      return bits & (kInteger | kNumber);
    case OrderedJson::value_t::number_float:
      return (bits & kNumber) ||
             ((bits & kInteger) && value.get<double>() == std::floor(value.get<double>()));
    case OrderedJson::value_t::string:
      return bits & kString;
    case OrderedJson::value_t::array:
      return bits & kArray;
    case OrderedJson::value_t::object:
      return bits & kObject;
    default:
      return false;
  }
}

// One end of a numeric range: an integer, inclusive or not, or none.
struct Bound {
  std::optional<double> value;
  bool exclusive = false;
};

}  // namespace

void Refuse(const std::string& path, std::string_view message) {
  FailField(ErrorCode::kInvalidArgument, path, message);
}

int64_t Count(const OrderedJson& schema, const char* key, const std::string& path) {
  const OrderedJson& value = schema[key];
  const std::string at = JoinPath(path, key);
  if (!value.is_number() || value.get<double>() < 0 ||
      value.get<double>() != std::floor(value.get<double>())) {
    Refuse(at, "must be a non-negative integer");
  }
  if (value.get<double>() > kMaxRepetitions) {
    Refuse(at, StrCat("values above ", kMaxRepetitions, " are not supported"));
  }
  return value.get<int64_t>();
}

std::string JoinPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string IndexPath(const std::string& path, const std::string& key, size_t index) {
  return StrCat(JoinPath(path, key), "[", index, "]");
}

SchemaCompiler::SchemaCompiler(JsonRules& rules, const OrderedJson& root, std::string root_path)
    : rules_(rules), b_(rules.builder()), root_(root), root_path_(std::move(root_path)) {}

const OrderedJson& SchemaCompiler::Resolve(const std::string& ref, const std::string& path,
                                           std::string* where) {
  const std::string at = JoinPath(path, "$ref");
  if (ref.empty() || ref[0] != '#')
    Refuse(at, "only references inside the schema (\"#/...\") are supported");
  try {
    const nlohmann::json_pointer<std::string> pointer(ref.substr(1));
    if (!root_.contains(pointer)) Refuse(at, StrCat("\"", ref, "\" names nothing in the schema"));
    std::string target = root_path_;
    for (size_t start = 2; start <= ref.size();) {
      const size_t end = std::min(ref.find('/', start), ref.size());
      std::string token = ref.substr(start, end - start);
      for (size_t i = 0; (i = token.find('~', i)) != std::string::npos && i + 1 < token.size();
           ++i) {
        token.replace(i, 2, token[i + 1] == '1' ? "/" : "~");
      }
      target = JoinPath(target, token);
      start = end + 1;
    }
    *where = target;
    return root_.at(pointer);
  } catch (const nlohmann::json::exception&) {
    Refuse(at, StrCat("\"", ref, "\" is not a valid JSON pointer"));
  }
}

Sequence SchemaCompiler::Ref(const std::string& ref, const std::string& path, int depth) {
  const auto it = ref_rules_.find(ref);
  if (it != ref_rules_.end()) return GrammarBuilder::Ref(it->second);
  std::string where;
  const OrderedJson& target = Resolve(ref, path, &where);
  const int32_t rule = b_.NewRule();
  b_.SetOrigin(rule, where);
  ref_rules_.emplace(ref, rule);
  b_.Define(rule, {Compile(target, where, depth + 1)});
  return GrammarBuilder::Ref(rule);
}

OrderedJson SchemaCompiler::Inline(const OrderedJson& schema, const std::string& path) {
  if (!schema.is_object() || !schema.contains("$ref")) return schema;
  if (!schema["$ref"].is_string()) Refuse(JoinPath(path, "$ref"), "must be a string");
  std::string where;
  const OrderedJson& target = Resolve(schema["$ref"].get<std::string>(), path, &where);
  if (target.is_object() && target.contains("$ref")) {
    Refuse(JoinPath(path, "$ref"),
           "a reference to a reference cannot be combined with other keywords");
  }
  return MergeSchemas(target, WithoutKeys(schema, {"$ref"}), path);
}

Sequence SchemaCompiler::Compile(const OrderedJson& schema, const std::string& path, int depth) {
  if (depth > kMaxDepth)
    Refuse(path, StrCat("schemas nested deeper than ", kMaxDepth, " are not supported"));
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return rules_.Value();
    Refuse(path, "a false schema matches nothing");
  }
  if (!schema.is_object()) Refuse(path, "a schema must be an object or a boolean");
  for (const auto& [key, value] : schema.items()) {
    if (IsAnnotation(key) || kGeneralKeywords.count(key) || kObjectKeywords.count(key) ||
        kArrayKeywords.count(key) || kStringKeywords.count(key) || kNumberKeywords.count(key)) {
      continue;
    }
    Refuse(JoinPath(path, key), StrCat("the keyword \"", key, "\" is not supported"));
  }
  if (schema.contains("uniqueItems") && schema["uniqueItems"] != false) {
    Refuse(JoinPath(path, "uniqueItems"), "the keyword \"uniqueItems\" is not supported");
  }

  if (schema.contains("$ref")) {
    const OrderedJson& ref = schema["$ref"];
    if (!ref.is_string()) Refuse(JoinPath(path, "$ref"), "must be a string");
    if (WithoutKeys(schema, {"$ref"}).empty()) return Ref(ref.get<std::string>(), path, depth);
    return Compile(Inline(schema, path), path, depth + 1);
  }
  if (schema.contains("allOf")) {
    const OrderedJson& parts = schema["allOf"];
    if (!parts.is_array() || parts.empty())
      Refuse(JoinPath(path, "allOf"), "must be a non-empty array");
    OrderedJson merged = WithoutKeys(schema, {"allOf"});
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string at = IndexPath(path, "allOf", i);
      merged = MergeSchemas(merged, Inline(parts[i], at), at);
    }
    return Compile(merged, path, depth + 1);
  }
  if (schema.contains("anyOf") || schema.contains("oneOf")) {
    if (schema.contains("anyOf") && schema.contains("oneOf")) {
      Refuse(JoinPath(path, "oneOf"), "anyOf and oneOf together are not supported");
    }
    const char* key = schema.contains("anyOf") ? "anyOf" : "oneOf";
    const OrderedJson& options = schema[key];
    if (!options.is_array() || options.empty())
      Refuse(JoinPath(path, key), "must be a non-empty array");
    const OrderedJson rest = WithoutKeys(schema, {"anyOf", "oneOf"});
    std::vector<Sequence> alternatives;
    for (size_t i = 0; i < options.size(); ++i) {
      const std::string at = IndexPath(path, key, i);
      alternatives.push_back(
          rest.empty() ? Compile(options[i], at, depth + 1)
                       : Compile(MergeSchemas(rest, Inline(options[i], at), at), at, depth + 1));
    }
    return b_.Alt(std::move(alternatives));
  }
  if (schema.contains("enum") || schema.contains("const")) return Enum(schema, path);
  return CompileTyped(schema, path, depth);
}

Sequence SchemaCompiler::Enum(const OrderedJson& schema, const std::string& path) {
  for (const auto& [key, unused] : schema.items()) {
    if (IsConstraint(key) && key != "enum" && key != "const" && key != "type" &&
        key != "nullable") {
      Refuse(JoinPath(path, key),
             StrCat("\"", key, "\" combined with enum or const is not supported"));
    }
  }
  unsigned bits = schema.contains("type") ? TypeBits(schema, path) : kAllTypes;
  if (schema.contains("type") && schema.value("nullable", false) == true) bits |= kNull;
  std::vector<OrderedJson> values;
  if (schema.contains("enum")) {
    if (!schema["enum"].is_array() || schema["enum"].empty()) {
      Refuse(JoinPath(path, "enum"), "must be a non-empty array");
    }
    values.assign(schema["enum"].begin(), schema["enum"].end());
  }
  if (schema.contains("const")) {
    if (schema.contains("enum") &&
        std::find(values.begin(), values.end(), schema["const"]) == values.end()) {
      Refuse(JoinPath(path, "const"), "the const is not one of the enum values");
    }
    values = {schema["const"]};
  }
  std::vector<Sequence> alternatives;
  std::set<std::string> seen;
  for (const OrderedJson& value : values) {
    const std::string text = value.dump(-1, ' ', false, OrderedJson::error_handler_t::strict);
    if (HasType(value, bits) && seen.insert(text).second) alternatives.push_back(b_.Literal(text));
  }
  if (alternatives.empty()) Refuse(JoinPath(path, "enum"), "no value has the schema's type");
  return b_.Alt(std::move(alternatives));
}

Sequence SchemaCompiler::CompileTyped(const OrderedJson& schema, const std::string& path,
                                      int depth) {
  unsigned bits = TypeBits(schema, path);
  if (schema.contains("nullable")) {
    if (!schema["nullable"].is_boolean()) Refuse(JoinPath(path, "nullable"), "must be a boolean");
    if (schema["nullable"] == true) bits |= kNull;
  }
  // Keywords that constrain each family; none: the shared "any" rules.
  const auto has_any = [&](const std::set<std::string>& keywords) {
    for (const auto& [key, unused] : schema.items()) {
      if (keywords.count(key)) return true;
    }
    return false;
  };
  if (bits == kAllTypes && !has_any(kObjectKeywords) && !has_any(kArrayKeywords) &&
      !has_any(kStringKeywords) && !has_any(kNumberKeywords)) {
    return rules_.Value();
  }
  std::vector<Sequence> alternatives;
  if (bits & kObject) {
    alternatives.push_back(has_any(kObjectKeywords) ? ObjectSchema(schema, path, depth)
                                                    : rules_.Object());
  }
  if (bits & kArray) {
    alternatives.push_back(has_any(kArrayKeywords) ? ArraySchema(schema, path, depth)
                                                   : rules_.Array());
  }
  if (bits & kString) alternatives.push_back(StringSchema(schema, path));
  if (bits & kNumber) alternatives.push_back(NumberSchema(schema, path, false));
  if (bits & kInteger) alternatives.push_back(NumberSchema(schema, path, true));
  if (bits & kBoolean) alternatives.push_back(rules_.Boolean());
  if (bits & kNull) alternatives.push_back(rules_.Null());
  return b_.Alt(std::move(alternatives));
}

Sequence SchemaCompiler::StringSchema(const OrderedJson& schema, const std::string& path) {
  const bool has_length = schema.contains("minLength") || schema.contains("maxLength");
  if (schema.contains("pattern") || schema.contains("format")) {
    const char* key = schema.contains("pattern") ? "pattern" : "format";
    const std::string at = JoinPath(path, key);
    if (schema.contains("pattern") && schema.contains("format")) {
      Refuse(JoinPath(path, "format"), "format combined with pattern is not supported");
    }
    if (has_length) {
      Refuse(JoinPath(path, schema.contains("minLength") ? "minLength" : "maxLength"),
             StrCat("minLength/maxLength combined with ", key, " is not supported"));
    }
    if (!schema[key].is_string()) Refuse(at, "must be a string");
    const std::string value = schema[key].get<std::string>();
    if (schema.contains("format")) {
      const std::optional<std::string_view> pattern = FormatPattern(value);
      if (!pattern) {
        Refuse(at, StrCat("the format \"", value,
                          "\" is not supported (supported: date, time, date-time, uuid, email, "
                          "uri, ipv4, hostname)"));
      }
      return PatternString(rules_, *pattern, at);
    }
    return PatternString(rules_, value, at);
  }
  const int64_t min = schema.contains("minLength") ? Count(schema, "minLength", path) : 0;
  const int64_t max = schema.contains("maxLength") ? Count(schema, "maxLength", path) : -1;
  if (max >= 0 && max < min) Refuse(JoinPath(path, "maxLength"), "is below minLength");
  return rules_.String(min, max);
}

Sequence SchemaCompiler::NumberSchema(const OrderedJson& schema, const std::string& path,
                                      bool integer) {
  Bound low, high;
  const auto read = [&](const char* key) -> std::optional<double> {
    if (!schema.contains(key)) return std::nullopt;
    const OrderedJson& value = schema[key];
    if (value.is_boolean()) return std::nullopt;
    if (!value.is_number()) Refuse(JoinPath(path, key), "must be a number");
    const double x = value.get<double>();
    if (std::fabs(x) > kMaxBound) {
      Refuse(JoinPath(path, key), StrCat("bounds beyond ±", kMaxBound, " are not supported"));
    }
    if (!integer && x != std::floor(x)) {
      Refuse(JoinPath(path, key), "a non-integer bound on a number is not supported");
    }
    return x;
  };
  // Draft 4 writes exclusiveMinimum: true next to minimum.
  const auto tighten = [&](Bound* bound, const char* inclusive, const char* exclusive, bool lower) {
    const std::optional<double> plain = read(inclusive), strict = read(exclusive);
    const bool draft4 = schema.contains(exclusive) && schema[exclusive] == true;
    if (plain) *bound = {plain, draft4};
    if (strict &&
        (!bound->value || (lower ? *strict >= *bound->value : *strict <= *bound->value))) {
      *bound = {strict, true};
    }
  };
  tighten(&low, "minimum", "exclusiveMinimum", true);
  tighten(&high, "maximum", "exclusiveMaximum", false);

  if (!low.value && !high.value) return integer ? rules_.Integer() : rules_.Number();
  std::vector<Sequence> alternatives;
  if (integer) {
    // The integers in range: [lo, hi] after rounding the bounds inward.
    std::optional<int64_t> lo, hi;
    if (low.value)
      lo = static_cast<int64_t>(low.exclusive ? std::floor(*low.value) + 1 : std::ceil(*low.value));
    if (high.value)
      hi = static_cast<int64_t>(high.exclusive ? std::ceil(*high.value) - 1
                                               : std::floor(*high.value));
    if (lo && hi && *lo > *hi)
      Refuse(JoinPath(path, "maximum"), "no integer lies within the bounds");
    if (!hi || *hi >= 0) {
      for (Sequence& digits : rules_.Digits(lo ? std::max<int64_t>(*lo, 0) : 0,
                                            hi ? std::optional<uint64_t>(*hi) : std::nullopt)) {
        alternatives.push_back(std::move(digits));
      }
    }
    if (!lo || *lo < 0) {
      const uint64_t first = hi && *hi < 0 ? -*hi : 1;
      const std::optional<uint64_t> last = lo ? std::optional<uint64_t>(-*lo) : std::nullopt;
      std::vector<Sequence> magnitudes = rules_.Digits(first, last);
      if (!magnitudes.empty()) {
        alternatives.push_back(Concat({b_.Literal("-"), b_.Alt(std::move(magnitudes))}));
      }
    }
    return b_.Alt(std::move(alternatives));
  }

  // A decimal I(.F)? without exponent, its magnitude m between integer bounds:
  // I in [a, b] with any fraction, plus the edge integers with the fractions that keep
  // m inside (lo < m needs F nonzero when I = lo; m <= hi needs F zero when I = hi).
  const auto magnitude = [&](int64_t lo, bool lo_exclusive, std::optional<int64_t> hi,
                             bool hi_exclusive) {
    std::vector<Sequence> pieces;
    const int64_t a = lo_exclusive ? lo + 1 : lo;
    if (!hi || *hi - 1 >= a) {
      std::vector<Sequence> digits =
          rules_.Digits(a, hi ? std::optional<uint64_t>(*hi - 1) : std::nullopt);
      if (!digits.empty())
        pieces.push_back(Concat({b_.Alt(std::move(digits)), rules_.AnyFraction()}));
    }
    if (lo_exclusive && (!hi || lo < *hi)) {
      pieces.push_back(Concat({b_.Literal(std::to_string(lo)), rules_.NonzeroFraction()}));
    }
    if (hi && !hi_exclusive && (*hi > lo || (*hi == lo && !lo_exclusive))) {
      pieces.push_back(Concat({b_.Literal(std::to_string(*hi)), rules_.ZeroFraction()}));
    }
    return pieces;
  };
  // Plain values beside their flags: GCC 12 for aarch64 at -O3 takes an optional<int64_t>
  // read after its check as maybe uninitialized.
  const bool has_lo = low.value.has_value(), has_hi = high.value.has_value();
  const int64_t lo = has_lo ? static_cast<int64_t>(*low.value) : 0;
  const int64_t hi = has_hi ? static_cast<int64_t>(*high.value) : 0;
  if (!has_hi || hi > 0 || (hi == 0 && !high.exclusive)) {
    const bool from_zero = !has_lo || lo < 0;
    for (Sequence& piece :
         magnitude(from_zero ? 0 : lo, from_zero ? false : low.exclusive,
                   has_hi ? std::optional<int64_t>(hi) : std::nullopt, high.exclusive)) {
      alternatives.push_back(std::move(piece));
    }
  }
  if (!has_lo || lo < 0) {
    // -m with m > 0 and m within [-hi, -lo].
    const bool from_zero = !has_hi || hi >= 0;
    std::vector<Sequence> pieces =
        magnitude(from_zero ? 0 : -hi, from_zero ? true : high.exclusive,
                  has_lo ? std::optional<int64_t>(-lo) : std::nullopt, low.exclusive);
    if (!pieces.empty())
      alternatives.push_back(Concat({b_.Literal("-"), b_.Alt(std::move(pieces))}));
  }
  if (alternatives.empty()) Refuse(JoinPath(path, "maximum"), "no number lies within the bounds");
  return b_.Alt(std::move(alternatives));
}

}  // namespace qvl::grammar
