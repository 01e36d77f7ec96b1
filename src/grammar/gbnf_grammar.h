// GBNF, llama.cpp's grammar format (llama-server's "grammar" field), which is also the
// EBNF vLLM's xgrammar reads (guided_grammar, structured_outputs.grammar), compiled to a
// byte grammar that GrammarMatcher (grammar_matcher.h) turns into token masks.
//
// Accepted: rules `name ::= alternatives` (names of letters, digits, '-' and '_'; a rule
// may span lines and refer to rules defined later; `root` is where the output starts),
// literals "..." and '...', character classes [a-z0-9_] and [^...], '.' (any character),
// groups ( ), alternation |, repetition * + ? {m} {m,} {m,n} (counts up to
// kMaxRepetitions), comments from '#' to the end of the line, and the escapes \n \r \t
// \\ \" \' \[ \] \- \xHH \uHHHH \UHHHHHHHH. Characters are Unicode code points, matched
// as their UTF-8 bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace qvl {

class Grammar;

// Throws FieldError(kInvalidArgument, field, "line L, column C: ...") for a syntax error, an
// undefined or twice-defined rule, a missing `root`, a left-recursive rule (which llama.cpp
// refuses too), a rule that can never finish, more than kMaxLeadingParts rules and
// repetitions entered before a character (grammar_rules.h), and a grammar too large to enforce.
std::shared_ptr<const Grammar> CompileGbnf(std::string_view text, const std::string& field);

}  // namespace qvl
