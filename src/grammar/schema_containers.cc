// Arrays and objects of SchemaCompiler (schema_compiler.h): items and their counts,
// properties in order with optional ones optional, and the keys additionalProperties
// may add.
#include <algorithm>
#include <optional>
#include <set>

#include "base/error.h"
#include "grammar/schema_compiler.h"
#include "text/utf8.h"

namespace qvl::grammar {

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
      // Extra keys are written raw: a name with a character that needs escaping cannot
      // be spelled by one, so that branch needs no exclusion.
      if (raw.Intersect(one).Empty()) continue;
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
