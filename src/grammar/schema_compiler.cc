#include "grammar/schema_compiler.h"

#include <cmath>
#include <optional>
#include <set>

#include "base/field_error.h"
#include "grammar/pattern_grammar.h"
#include "grammar/string_formats.h"
#include "text/utf8.h"

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

[[noreturn]] void Refuse(const std::string& path, std::string_view message) {
  FailField(ErrorCode::kInvalidArgument, path, message);
}

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
  const std::optional<int64_t> lo = low.value ? std::optional<int64_t>(*low.value) : std::nullopt;
  const std::optional<int64_t> hi = high.value ? std::optional<int64_t>(*high.value) : std::nullopt;
  if (!hi || *hi > 0 || (*hi == 0 && !high.exclusive)) {
    const bool from_zero = !lo || *lo < 0;
    for (Sequence& piece :
         magnitude(from_zero ? 0 : *lo, from_zero ? false : low.exclusive, hi, high.exclusive)) {
      alternatives.push_back(std::move(piece));
    }
  }
  if (!lo || *lo < 0) {
    // -m with m > 0 and m within [-hi, -lo].
    const bool from_zero = !hi || *hi >= 0;
    std::vector<Sequence> pieces =
        magnitude(from_zero ? 0 : -*hi, from_zero ? true : high.exclusive,
                  lo ? std::optional<int64_t>(-*lo) : std::nullopt, low.exclusive);
    if (!pieces.empty())
      alternatives.push_back(Concat({b_.Literal("-"), b_.Alt(std::move(pieces))}));
  }
  if (alternatives.empty()) Refuse(JoinPath(path, "maximum"), "no number lies within the bounds");
  return b_.Alt(std::move(alternatives));
}

Sequence SchemaCompiler::ArraySchema(const OrderedJson& schema, const std::string& path,
                                     int depth) {
  std::vector<Sequence> prefix;
  std::optional<Sequence> rest = rules_.Value();  // nullopt: no items past the prefix
  const auto compile_rest = [&](const char* key) {
    const OrderedJson& items = schema[key];
    if (items == false) {
      rest.reset();
    } else {
      rest = Compile(items, JoinPath(path, key), depth + 1);
    }
  };
  const auto compile_prefix = [&](const char* key) {
    const OrderedJson& items = schema[key];
    if (!items.is_array()) Refuse(JoinPath(path, key), "must be an array of schemas");
    for (size_t i = 0; i < items.size(); ++i) {
      prefix.push_back(Compile(items[i], IndexPath(path, key, i), depth + 1));
    }
  };
  if (schema.contains("prefixItems")) {
    compile_prefix("prefixItems");
    if (schema.contains("items")) compile_rest("items");
  } else if (schema.contains("items") && schema["items"].is_array()) {
    compile_prefix("items");  // draft 4-7 tuples
    if (schema.contains("additionalItems")) compile_rest("additionalItems");
  } else if (schema.contains("items")) {
    compile_rest("items");
  }
  const int64_t k = static_cast<int64_t>(prefix.size());
  const int64_t min = schema.contains("minItems") ? Count(schema, "minItems", path) : 0;
  int64_t max = schema.contains("maxItems") ? Count(schema, "maxItems", path) : -1;
  if (!rest && (max < 0 || max > k)) max = k;
  if (max >= 0 && max < min) {
    Refuse(JoinPath(path, schema.contains("maxItems") ? "maxItems" : "minItems"),
           "no array length satisfies minItems, maxItems and the item schemas");
  }
  const Sequence comma = Concat({b_.Literal(","), rules_.Space()});
  const auto item = [&](int64_t i) { return Concat({i < k ? prefix[i] : *rest, rules_.Space()}); };
  // Items from index i on, after i items: each with a leading comma.
  const auto tail = [&](auto&& self, int64_t i) -> Sequence {
    if (i == max) return {};
    if (i >= k) {
      const int64_t lo = std::max<int64_t>(min - i, 0);
      return b_.Repeat(Concat({comma, item(i)}), lo, max < 0 ? -1 : max - i);
    }
    Sequence next = Concat({comma, item(i), self(self, i + 1)});
    return i >= min ? b_.Optional(std::move(next)) : next;
  };
  Sequence body;
  if (max != 0) {
    body = Concat({item(0), tail(tail, 1)});
    if (min == 0) body = b_.Optional(std::move(body));
  }
  return Concat({b_.Literal("["), rules_.Space(), body, b_.Literal("]")});
}

Sequence SchemaCompiler::KeyNotIn(const std::vector<std::string>& names) {
  CodepointSet raw;
  raw.Add(0x20, 0x21);
  raw.Add(0x23, 0x5B);
  raw.Add(0x5D, 0x10FFFF);
  const Sequence any_rest = b_.Star(rules_.Utf8(raw));
  // Over the names' characters as a trie: at each node, stop (unless a name ends here),
  // take a child's character, or leave the trie with any other character.
  std::vector<std::u32string> words;
  for (const std::string& name : names) {
    std::u32string word;
    for (size_t pos = 0; pos < name.size();) {
      const text::Utf8Sequence seq = text::ScanUtf8(name, pos);
      word.push_back(text::DecodeUtf8(name, pos, seq.length));
      pos += seq.length;
    }
    words.push_back(word);
  }
  const auto node = [&](auto&& self, const std::u32string& prefix) -> Sequence {
    std::vector<Sequence> alternatives;
    std::set<char32_t> next;
    bool ends = false;
    for (const std::u32string& word : words) {
      if (word.compare(0, prefix.size(), prefix) != 0) continue;
      if (word.size() == prefix.size()) {
        ends = true;
      } else {
        next.insert(word[prefix.size()]);
      }
    }
    if (!ends) alternatives.push_back({});
    CodepointSet taken;
    for (char32_t c : next) {
      CodepointSet one;
      one.Add(c, c);
      taken.Add(one);
      alternatives.push_back(Concat({rules_.Utf8(one), self(self, prefix + c)}));
    }
    const CodepointSet other = raw.Intersect(taken.Complement());
    if (!other.Empty()) alternatives.push_back(Concat({rules_.Utf8(other), any_rest}));
    return b_.Alt(std::move(alternatives));
  };
  return Concat({b_.Literal("\""), node(node, U""), b_.Literal("\"")});
}

Sequence SchemaCompiler::ObjectSchema(const OrderedJson& schema, const std::string& path,
                                      int depth) {
  struct Member {
    std::string name;
    Sequence pair;  // "name": value, then space
    bool required;
  };
  std::vector<Member> members;
  std::vector<std::string> required;
  if (schema.contains("required")) {
    const OrderedJson& list = schema["required"];
    const std::string at = JoinPath(path, "required");
    if (!list.is_array()) Refuse(at, "must be an array of property names");
    for (const OrderedJson& name : list) {
      if (!name.is_string()) Refuse(at, "must be an array of property names");
      if (std::find(required.begin(), required.end(), name.get<std::string>()) != required.end()) {
        Refuse(at, StrCat("names ", name.dump(), " twice"));
      }
      required.push_back(name.get<std::string>());
    }
  }
  const auto pair = [&](const std::string& name, Sequence value) {
    return Concat({b_.Literal(OrderedJson(name).dump()), rules_.Space(), b_.Literal(":"),
                   rules_.Space(), std::move(value), rules_.Space()});
  };
  const auto is_required = [&](const std::string& name) {
    return std::find(required.begin(), required.end(), name) != required.end();
  };
  if (schema.contains("properties")) {
    const OrderedJson& properties = schema["properties"];
    if (!properties.is_object()) Refuse(JoinPath(path, "properties"), "must be an object");
    for (const auto& [name, property] : properties.items()) {
      members.push_back(
          {name,
           pair(name, Compile(property, JoinPath(JoinPath(path, "properties"), name), depth + 1)),
           is_required(name)});
    }
  }
  std::vector<std::string> names;
  for (const Member& member : members) names.push_back(member.name);
  std::optional<Sequence> additional_value = rules_.Value();
  if (schema.contains("additionalProperties")) {
    const OrderedJson& additional = schema["additionalProperties"];
    if (additional == false) {
      additional_value.reset();
    } else {
      additional_value = Compile(additional, JoinPath(path, "additionalProperties"), depth + 1);
    }
  }
  for (const std::string& name : required) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (!additional_value) {
      Refuse(JoinPath(path, "required"),
             StrCat("requires \"", name, "\", which additionalProperties: false forbids"));
    }
    members.push_back({name, pair(name, *additional_value), true});
    names.push_back(name);
  }
  std::optional<Sequence> additional_pair;
  if (additional_value) {
    additional_pair = Concat({KeyNotIn(names), rules_.Space(), b_.Literal(":"), rules_.Space(),
                              *additional_value, rules_.Space()});
  }
  const Sequence comma = Concat({b_.Literal(","), rules_.Space()});
  // after(i): members from i on when one was already written (each takes a leading comma);
  // first(i): the same when none was, so the first one written takes none.
  const size_t n = members.size();
  std::vector<Sequence> after(n + 1), first(n + 1);
  if (additional_pair) {
    after[n] = b_.Star(Concat({comma, *additional_pair}));
    first[n] = b_.Optional(Concat({*additional_pair, after[n]}));
  }
  for (size_t i = n; i-- > 0;) {
    const Sequence with_comma = Concat({comma, members[i].pair});
    after[i] = members[i].required ? Concat({with_comma, after[i + 1]})
                                   : Concat({b_.Optional(with_comma), after[i + 1]});
    const Sequence taken = Concat({members[i].pair, after[i + 1]});
    first[i] = members[i].required ? taken : b_.Alt({taken, first[i + 1]});
    // Earlier members refer to these instead of copying them.
    after[i] = b_.Shared(std::move(after[i]));
    first[i] = b_.Shared(std::move(first[i]));
  }
  return Concat({b_.Literal("{"), rules_.Space(), first[0], b_.Literal("}")});
}

}  // namespace qvl::grammar
