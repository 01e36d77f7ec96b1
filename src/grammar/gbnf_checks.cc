#include "grammar/gbnf_checks.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar_rules.h"

namespace qvl::grammar {
namespace {

// Left recursion and rules that never finish are refused by GrammarBuilder::Build too;
// refused here first, the error names the rule and its line.
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
    const std::vector<int32_t> order = RefuseLeftRecursion();
    const std::vector<uint8_t> finite = Solve(/*nullable=*/false);
    for (const GbnfRule& rule : gbnf_.rules) {
      if (!finite[rule.body.id]) {
        src_.FailAt(rule.at, "rule `", rule.name,
                    "` can never finish: each of its alternatives leads into a recursion with "
                    "no way out");
      }
    }
    rule_cost_.assign(gbnf_.rules.size(), 0);
    leading_.assign(nodes_.size(), -1);
    for (int32_t r : order) rule_cost_[r] = Leading(gbnf_.rules[r].body);
    for (int32_t r : order) RefuseCostly(gbnf_.rules[r].body);
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
  // chain of rules may be as long as the grammar. Returns the rules with every rule after
  // the ones it starts with.
  std::vector<int32_t> RefuseLeftRecursion() const {
    const size_t count = gbnf_.rules.size();
    std::vector<std::vector<const GbnfExpr*>> leading(count);
    for (size_t r = 0; r < count; ++r) LeadingRefs(gbnf_.rules[r].body, &leading[r]);
    std::vector<uint8_t> color(count, 0);  // 0 new, 1 on the path, 2 done
    std::vector<int32_t> order;
    for (size_t start = 0; start < count; ++start) {
      if (color[start] != 0) continue;
      std::vector<std::pair<int32_t, size_t>> path = {{static_cast<int32_t>(start), 0}};
      color[start] = 1;
      while (!path.empty()) {
        const int32_t rule = path.back().first;
        const size_t edge = path.back().second++;
        if (edge == leading[rule].size()) {
          color[rule] = 2;
          order.push_back(rule);
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
    return order;
  }

  // What expanding `e` may enter before a character, saturated past the limit; computed
  // once per expression.
  int64_t Leading(const GbnfExpr& e) {
    if (leading_[e.id] < 0) leading_[e.id] = std::min(ComputeLeading(e), kCap);
    return leading_[e.id];
  }

  int64_t ComputeLeading(const GbnfExpr& e) {
    switch (e.kind) {
      case GbnfExpr::Kind::kLiteral:
        return e.literal.empty() ? 0 : 1;
      case GbnfExpr::Kind::kChars:
        return 2;  // a character beyond ASCII is a rule of byte sequences
      case GbnfExpr::Kind::kRef:
        return 1 + rule_cost_[e.rule];
      case GbnfExpr::Kind::kSequence: {
        int64_t total = 0;
        for (const GbnfExpr& item : e.items) {
          total = std::min(total + Leading(item), kCap);
          if (!nullable_[item.id]) break;
        }
        return total;
      }
      case GbnfExpr::Kind::kChoice: {
        int64_t most = 0;
        for (const GbnfExpr& item : e.items) most = std::max(most, Leading(item));
        return most;
      }
      case GbnfExpr::Kind::kRepeat: {
        const GbnfExpr& item = e.items[0];
        const int64_t one = Leading(item) + 1;
        if (!nullable_[item.id]) return one;
        // Every copy may be empty, so all of them are entered.
        return (e.max >= 0 ? e.max : e.min + 1) * one;
      }
    }
    return 0;
  }

  // Every place expansion may resume at: the start of any expression, and any item of a
  // sequence (after a character of the one before it).
  void RefuseCostly(const GbnfExpr& e) {
    for (const GbnfExpr& item : e.items) RefuseCostly(item);
    int64_t cost = Leading(e);
    if (e.kind == GbnfExpr::Kind::kSequence) {
      int64_t run = 0;  // from item i up to the first that cannot be empty
      for (size_t i = e.items.size(); i-- > 0;) {
        const GbnfExpr& item = e.items[i];
        run = std::min(Leading(item) + (nullable_[item.id] ? run : 0), kCap);
        cost = std::max(cost, run);
      }
    }
    if (cost > kMaxLeadingParts) {
      src_.FailAt(e.at, "more than ", kMaxLeadingParts,
                  " rules and repetitions may be entered here before the next character, too "
                  "many to enforce: make the repeated part non-empty (\"a\"{0,2000}, not "
                  "(\"a\"?){0,2000}) or shorten the chain of rules that start with rules");
    }
  }

  static constexpr int64_t kCap = kMaxLeadingParts + 1;

  const GbnfSource& src_;
  const GbnfGrammar& gbnf_;
  std::vector<const GbnfExpr*> nodes_;
  std::vector<int32_t> parent_;
  std::vector<int32_t> rule_of_body_;
  std::vector<std::vector<int32_t>> refs_to_;
  std::vector<uint8_t> nullable_;
  std::vector<int64_t> rule_cost_;  // Leading() of each rule's body
  std::vector<int64_t> leading_;    // per expression, -1 until computed
};

}  // namespace

void CheckGbnf(const GbnfSource& source, const GbnfGrammar& gbnf) {
  GbnfChecks(source, gbnf).Run();
}

}  // namespace qvl::grammar
