#include "grammar/gbnf_grammar.h"

#include <map>
#include <utility>
#include <vector>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_rules.h"

namespace qvl {
namespace grammar {
namespace {

// The checks GrammarBuilder::Build makes too, made here on the GBNF rules so the error
// names the rule and its line: no rule may reach itself before consuming a character,
// and every rule must have a finite expansion.
class GbnfChecks {
 public:
  GbnfChecks(const GbnfSource& source, const GbnfGrammar& gbnf)
      : src_(source),
        gbnf_(gbnf),
        nodes_(gbnf.expr_count),
        parent_(gbnf.expr_count, -1),
        rule_of_body_(gbnf.expr_count, -1),
        refs_to_(gbnf.rules.size()) {
    for (size_t r = 0; r < gbnf.rules.size(); ++r) {
      Index(gbnf.rules[r].body, -1);
      rule_of_body_[gbnf.rules[r].body.id] = static_cast<int32_t>(r);
    }
  }

  void Run() {
    nullable_ = Solve(/*nullable=*/true);
    RefuseLeftRecursion();
    const std::vector<uint8_t> finite = Solve(/*nullable=*/false);
    for (const GbnfRule& rule : gbnf_.rules) {
      if (!finite[rule.body.id]) {
        src_.FailAt(rule.at, "rule `", rule.name,
                    "` can never finish: each of its alternatives leads into a recursion with "
                    "no way out");
      }
    }
  }

 private:
  void Index(const GbnfExpr& e, int32_t parent) {
    nodes_[e.id] = &e;
    parent_[e.id] = parent;
    if (e.kind == GbnfExpr::Kind::kRef) refs_to_[e.rule].push_back(e.id);
    for (const GbnfExpr& item : e.items) Index(item, e.id);
  }

  // Per expression: whether it can match the empty string (`nullable`) or, else, whether
  // it has a finite expansion. A worklist fixpoint (each expression waits for as many
  // children as it needs), linear in the grammar's size where sweeping the rules until
  // nothing changes costs a sweep per rule of a long chain.
  std::vector<uint8_t> Solve(bool nullable) const {
    const size_t count = nodes_.size();
    std::vector<uint8_t> holds(count, 0);
    std::vector<size_t> waiting(count, 1);
    std::vector<int32_t> queue;
    const auto mark = [&](int32_t id) {
      if (!holds[id]) {
        holds[id] = 1;
        queue.push_back(id);
      }
    };
    for (size_t id = 0; id < count; ++id) {
      const GbnfExpr& e = *nodes_[id];
      const auto i = static_cast<int32_t>(id);
      switch (e.kind) {
        case GbnfExpr::Kind::kLiteral:
          if (!nullable || e.literal.empty()) mark(i);
          break;
        case GbnfExpr::Kind::kChars:
          if (!nullable) mark(i);
          break;
        case GbnfExpr::Kind::kSequence:
          waiting[id] = e.items.size();
          if (e.items.empty()) mark(i);
          break;
        case GbnfExpr::Kind::kRepeat:
          if (e.min == 0) mark(i);
          break;
        case GbnfExpr::Kind::kChoice:
        case GbnfExpr::Kind::kRef:
          break;
      }
    }
    while (!queue.empty()) {
      const int32_t id = queue.back();
      queue.pop_back();
      if (rule_of_body_[id] >= 0) {
        for (int32_t ref : refs_to_[rule_of_body_[id]]) mark(ref);
      }
      const int32_t parent = parent_[id];
      if (parent >= 0 && !holds[parent] && --waiting[parent] == 0) mark(parent);
    }
    return holds;
  }

  // The references that `e` may start with: those after only nullable siblings.
  void LeadingRefs(const GbnfExpr& e, std::vector<const GbnfExpr*>* out) const {
    switch (e.kind) {
      case GbnfExpr::Kind::kRef:
        out->push_back(&e);
        break;
      case GbnfExpr::Kind::kSequence:
        for (const GbnfExpr& item : e.items) {
          LeadingRefs(item, out);
          if (!nullable_[item.id]) break;
        }
        break;
      case GbnfExpr::Kind::kChoice:
      case GbnfExpr::Kind::kRepeat:
        for (const GbnfExpr& item : e.items) LeadingRefs(item, out);
        break;
      case GbnfExpr::Kind::kLiteral:
      case GbnfExpr::Kind::kChars:
        break;
    }
  }

  // A cycle of leading references; the walk keeps its path on an explicit stack, as a
  // chain of rules may be as long as the grammar.
  void RefuseLeftRecursion() const {
    const size_t count = gbnf_.rules.size();
    std::vector<std::vector<const GbnfExpr*>> leading(count);
    for (size_t r = 0; r < count; ++r) LeadingRefs(gbnf_.rules[r].body, &leading[r]);
    std::vector<uint8_t> color(count, 0);  // 0 new, 1 on the path, 2 done
    for (size_t start = 0; start < count; ++start) {
      if (color[start] != 0) continue;
      std::vector<std::pair<int32_t, size_t>> path = {{static_cast<int32_t>(start), 0}};
      color[start] = 1;
      while (!path.empty()) {
        const int32_t rule = path.back().first;
        const size_t edge = path.back().second++;
        if (edge == leading[rule].size()) {
          color[rule] = 2;
          path.pop_back();
          continue;
        }
        const GbnfExpr& ref = *leading[rule][edge];
        if (color[ref.rule] == 1) {
          std::string cycle;
          bool on_cycle = false;
          for (const auto& [r, unused] : path) {
            on_cycle = on_cycle || r == ref.rule;
            if (on_cycle) cycle += StrCat(gbnf_.rules[r].name, " -> ");
          }
          src_.FailAt(ref.at, "rule `", gbnf_.rules[ref.rule].name, "` is left-recursive (", cycle,
                      gbnf_.rules[ref.rule].name,
                      " before any character): write the repetition with * or + instead, e.g. "
                      "`list ::= item (\",\" item)*`");
        }
        if (color[ref.rule] == 0) {
          color[ref.rule] = 1;
          path.push_back({ref.rule, 0});
        }
      }
    }
  }

  const GbnfSource& src_;
  const GbnfGrammar& gbnf_;
  std::vector<const GbnfExpr*> nodes_;
  std::vector<int32_t> parent_;
  std::vector<int32_t> rule_of_body_;
  std::vector<std::vector<int32_t>> refs_to_;
  std::vector<uint8_t> nullable_;
};

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
  grammar::GbnfChecks(source, gbnf).Run();
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
