// JSON Schema -> grammar rules (the work behind CompileJsonSchema, shared with the tool
// call grammar, which embeds one schema per function).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "grammar/json_rules.h"
#include "grammar/schema_merge.h"

namespace qvl::grammar {

class SchemaCompiler {
 public:
  // `root` is the document $refs resolve in; `root_path` prefixes every error path.
  SchemaCompiler(JsonRules& rules, const OrderedJson& root, std::string root_path);

  // The grammar of one JSON value matching the whole document.
  Sequence CompileRoot() { return Compile(root_, root_path_, 0); }

 private:
  Sequence Compile(const OrderedJson& schema, const std::string& path, int depth);
  Sequence CompileTyped(const OrderedJson& schema, const std::string& path, int depth);
  Sequence Enum(const OrderedJson& schema, const std::string& path);
  Sequence Ref(const std::string& ref, const std::string& path, int depth);
  const OrderedJson& Resolve(const std::string& ref, const std::string& path, std::string* where);
  // A schema with any top-level $ref replaced by its target merged with the siblings.
  OrderedJson Inline(const OrderedJson& schema, const std::string& path);
  Sequence StringSchema(const OrderedJson& schema, const std::string& path);
  Sequence NumberSchema(const OrderedJson& schema, const std::string& path, bool integer);
  Sequence ArraySchema(const OrderedJson& schema, const std::string& path, int depth);
  Sequence ObjectSchema(const OrderedJson& schema, const std::string& path, int depth);
  // A JSON string that is none of `names` (raw characters only, so no escape spells one).
  Sequence KeyNotIn(const std::vector<std::string>& names);

  JsonRules& rules_;
  GrammarBuilder& b_;
  const OrderedJson& root_;
  const std::string root_path_;
  std::map<std::string, int32_t> ref_rules_;
};

std::string JoinPath(const std::string& path, const std::string& key);
// Throws FieldError(kInvalidArgument, path, message).
[[noreturn]] void Refuse(const std::string& path, std::string_view message);
// schema[key] as a count (a non-negative integer up to kMaxRepetitions), else Refuse.
int64_t Count(const OrderedJson& schema, const char* key, const std::string& path);
std::string IndexPath(const std::string& path, const std::string& key, size_t index);

}  // namespace qvl::grammar
