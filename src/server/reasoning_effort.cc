#include "server/reasoning_effort.h"

#include <vector>

#include "base/field_error.h"

namespace qvl {

std::optional<int> ReasoningEffortBudget(std::string_view level) {
  for (const LevelBudget& entry : kReasoningEffortBudgets) {
    if (entry.level == level) return entry.budget;
  }
  return std::nullopt;
}

std::string ListLevels(std::span<const std::string_view> levels) {
  std::string out;
  for (const std::string_view level : levels) {
    if (!out.empty()) out += ", ";
    out += level;
  }
  return out;
}

std::optional<ReasoningEffort> ParseReasoningEffort(const RequestObject& object,
                                                    std::string_view key) {
  std::optional<std::string> level = object.String(key);
  if (!level) return std::nullopt;
  const std::optional<int> budget = ReasoningEffortBudget(*level);
  if (!budget) {
    std::vector<std::string_view> levels;
    for (const LevelBudget& entry : kReasoningEffortBudgets) levels.push_back(entry.level);
    FailField(ErrorCode::kInvalidArgument, object.Field(key), "\"", *level, "\" is not one of ",
              ListLevels(levels));
  }
  return ReasoningEffort{std::move(*level), *budget};
}

}  // namespace qvl
