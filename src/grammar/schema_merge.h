// allOf as one schema: keyword-by-keyword intersection where it is exact (types
// intersect, bounds tighten, required unites, shared properties become allOf of both),
// FieldError where it is not (two patterns, conflicting consts, additionalProperties
// that would reject the other part's properties).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace qvl::grammar {

using OrderedJson = nlohmann::ordered_json;

bool IsAnnotation(const std::string& keyword);

// a AND b, both schemas (objects or booleans) without a top-level $ref. `path` names b.
OrderedJson MergeSchemas(const OrderedJson& a, const OrderedJson& b, const std::string& path);

}  // namespace qvl::grammar
