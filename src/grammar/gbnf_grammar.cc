#include "grammar/gbnf_grammar.h"

#include <map>
#include <utility>
#include <vector>

#include "grammar/gbnf_checks.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_rules.h"

namespace qvl {
namespace grammar {
namespace {

class GbnfLowering {
 public:
  explicit GbnfLowering(const GbnfGrammar& gbnf) : gbnf_(gbnf), json_(&b_) {}

  std::shared_ptr<const Grammar> Lower() {
    // Build settles rule lengths by sweeping rules in id order, and grammars are written
    // top-down (a rule refers to rules defined after it): numbering the rules backwards
    // lets one sweep settle most of them.
    ids_.resize(gbnf_.rules.size());
    for (size_t r = gbnf_.rules.size(); r-- > 0;) ids_[r] = b_.NewRule();
    for (size_t r = 0; r < gbnf_.rules.size(); ++r) {
      const GbnfExpr& body = gbnf_.rules[r].body;
      std::vector<Sequence> alternatives;
      if (body.kind == GbnfExpr::Kind::kChoice) {
        for (const GbnfExpr& item : body.items) alternatives.push_back(LowerExpr(item));
      } else {
        alternatives.push_back(LowerExpr(body));
      }
      b_.Define(ids_[r], std::move(alternatives));
    }
    return b_.Build(GrammarBuilder::Ref(ids_[gbnf_.root]));
  }

 private:
  Sequence LowerExpr(const GbnfExpr& e) {
    switch (e.kind) {
      case GbnfExpr::Kind::kLiteral:
        return b_.Literal(e.literal);
      case GbnfExpr::Kind::kChars: {
        // A multi-byte class is a rule of its own; the same class again reuses it.
        const auto [it, added] = chars_.try_emplace(e.chars.ranges());
        if (added) it->second = json_.Utf8(e.chars);
        return it->second;
      }
      case GbnfExpr::Kind::kRef:
        return GrammarBuilder::Ref(ids_[e.rule]);
      case GbnfExpr::Kind::kSequence: {
        Sequence out;
        for (const GbnfExpr& item : e.items) {
          const Sequence part = LowerExpr(item);
          out.insert(out.end(), part.begin(), part.end());
        }
        return out;
      }
      case GbnfExpr::Kind::kChoice: {
        std::vector<Sequence> alternatives;
        for (const GbnfExpr& item : e.items) alternatives.push_back(LowerExpr(item));
        return b_.Alt(std::move(alternatives));
      }
      case GbnfExpr::Kind::kRepeat:
        return b_.Repeat(LowerExpr(e.items[0]), e.min, e.max);
    }
    return {};
  }

  const GbnfGrammar& gbnf_;
  GrammarBuilder b_;
  JsonRules json_;
  std::vector<int32_t> ids_;
  std::map<std::vector<std::pair<char32_t, char32_t>>, Sequence> chars_;
};

}  // namespace
}  // namespace grammar

std::shared_ptr<const Grammar> CompileGbnf(std::string_view text, const std::string& field) {
  const grammar::GbnfSource source(text, field);
  const grammar::GbnfGrammar gbnf = grammar::ParseGbnf(source);
  grammar::CheckGbnf(source, gbnf);
  try {
    return grammar::GbnfLowering(gbnf).Lower();
  } catch (const FieldError&) {
    // The checks above leave the builder one refusal: its size limits.
    source.Fail(
        "the grammar is too large to enforce once its repetitions are expanded: lower the "
        "repetition counts {m,n}");
  }
}

}  // namespace qvl
