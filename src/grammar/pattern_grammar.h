// JSON Schema "pattern" (an ECMA-262 regular expression, searched anywhere in the string
// unless anchored with ^ / $) as a grammar for the JSON string literal whose value
// matches, and vLLM's guided_regex (the same syntax matching the whole text, raw).
// Supported: literals, escapes (\d \D \w \W \s \S \t \n \r \f \v \0 \xHH \uHHHH,
// escaped punctuation), '.', classes [a-z0-9_] [^...], groups (...) (?:...), alternation,
// quantifiers ? * + {m} {m,} {m,n} (lazy forms match the same strings), ^ at the start
// and $ at the end of a top-level alternative. Anything else (backreferences, lookaround,
// \b, \p{..}, flags) is refused with FieldError at `path`, and so is a pattern that
// would have the matcher enter more than kMaxLeadingParts (grammar_rules.h) before a
// character, such as many copies of a group that may match nothing: (a?b?){5000}.
#pragma once

#include <string>
#include <string_view>

#include "grammar/json_rules.h"

namespace qvl::grammar {

// Most repetitions a quantifier or a length keyword may ask for: each one is a rule.
inline constexpr int64_t kMaxRepetitions = 10000;

// The quoted string, as JSON text.
Sequence PatternString(JsonRules& rules, std::string_view pattern, const std::string& path);
// The text the pattern matches whole, as raw UTF-8 (vLLM's full-match semantics): ^ and
// $ where PatternString takes them are allowed and change nothing.
Sequence PatternText(JsonRules& rules, std::string_view pattern, const std::string& path);

}  // namespace qvl::grammar
