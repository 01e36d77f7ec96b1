// What a parsed GBNF grammar must satisfy before it is lowered to bytes, checked on its
// named rules so that an error names the rule and its line: no left recursion, a finite
// expansion for every rule, and a bounded amount of expansion before each character.
#pragma once

#include <cstdint>

#include "grammar/gbnf_parser.h"

namespace qvl::grammar {

// Most rules and repetitions the matcher may enter before the next character (rules
// that start with rules, parts that may be empty in a sequence or a repetition {m,n}).
// The matcher expands them all, once per way of reaching them, on every step; past this
// a grammar would be too slow (and recurse too deep) to enforce.
inline constexpr int64_t kMaxGbnfLeadingParts = 1000;

// Throws FieldError through `source`: a rule that reaches itself before consuming a
// character, a rule that can never finish, or more than kMaxGbnfLeadingParts entered
// before a character.
void CheckGbnf(const GbnfSource& source, const GbnfGrammar& gbnf);

}  // namespace qvl::grammar
