// What a parsed GBNF grammar must satisfy before it is lowered to bytes, checked on its
// named rules so that an error names the rule and its line: no left recursion, a finite
// expansion for every rule, and a bounded amount of expansion before each character.
#pragma once

#include <cstdint>

#include "grammar/gbnf_parser.h"

namespace qvl::grammar {

// Throws FieldError through `source`: a rule that reaches itself before consuming a
// character, a rule that can never finish, or more than kMaxLeadingParts (grammar_rules.h)
// entered before a character; counted on the rules as written, so that the error points at
// the part to change.
void CheckGbnf(const GbnfSource& source, const GbnfGrammar& gbnf);

}  // namespace qvl::grammar
