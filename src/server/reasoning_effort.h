// Reasoning effort levels read as thinking budgets. OpenAI's clients ask for a level, not
// a number of tokens (chat's reasoning_effort, the Responses API's reasoning.effort), and
// so do Ollama's (think), while on a CPU a Thinking model's reasoning of thousands of
// tokens takes minutes: a level becomes GenerationRequest::reasoning_budget, so that a
// lower one answers sooner. none 0 ("</think>" first: no reasoning), minimal 256, low
// 1024, medium 4096, high and xhigh no cap (the model decides). A model that does not
// reason ignores the budget.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/request_ranges.h"
#include "server/request_fields.h"

namespace qvl {

// The budget of high and xhigh: as long as any answer may be, which the context caps
// first, so that the server's default (--thinking-budget) does not cap it either.
inline constexpr int kUncappedReasoningBudget =
    static_cast<int>(request_ranges::kThinkingTokenBudget.max);

struct LevelBudget {
  std::string_view level;
  int budget;
};
// OpenAI's levels, lowest first, and what each one costs: from minimal up, each capped
// level allows four times the reasoning of the one below it.
inline constexpr LevelBudget kReasoningEffortBudgets[] = {{"none", 0},
                                                          {"minimal", 256},
                                                          {"low", 1024},
                                                          {"medium", 4096},
                                                          {"high", kUncappedReasoningBudget},
                                                          {"xhigh", kUncappedReasoningBudget}};
// The levels Ollama's think takes beside true and false.
inline constexpr std::string_view kOllamaThinkLevels[] = {"low", "medium", "high"};

// The thinking budget of one of OpenAI's levels; nullopt for any other.
std::optional<int> ReasoningEffortBudget(std::string_view level);

// "low, medium, high": the levels as an error message lists them.
std::string ListLevels(std::span<const std::string_view> levels);

struct ReasoningEffort {
  std::string level;
  int budget = -1;
};

// `object`'s `key` as one of OpenAI's levels; nullopt when absent or null. Anything else
// throws FieldError(kInvalidArgument) naming object.Field(key) and listing the levels.
std::optional<ReasoningEffort> ParseReasoningEffort(const RequestObject& object,
                                                    std::string_view key);

}  // namespace qvl
