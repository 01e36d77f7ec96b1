#include "server/reasoning_effort.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/field_error.h"
#include "server/chat_request.h"
#include "server/chat_request_policy_for_test.h"

namespace qvl {
namespace {

TEST(ReasoningEffortTest, EachLevelIsABudget) {
  const std::pair<const char*, int> budgets[] = {{"none", 0},
                                                 {"minimal", 256},
                                                 {"low", 1024},
                                                 {"medium", 4096},
                                                 {"high", kUncappedReasoningBudget},
                                                 {"xhigh", kUncappedReasoningBudget}};
  for (const auto& [level, budget] : budgets) {
    EXPECT_EQ(ReasoningEffortBudget(level), budget) << level;
  }
  EXPECT_EQ(kUncappedReasoningBudget, 1 << 20);
  EXPECT_EQ(ReasoningEffortBudget("max"), std::nullopt);
  EXPECT_EQ(ReasoningEffortBudget("High"), std::nullopt);
  // Ollama takes three of them.
  for (const std::string_view level : kOllamaThinkLevels) {
    EXPECT_NE(ReasoningEffortBudget(level), std::nullopt) << level;
  }
  EXPECT_EQ(ListLevels(kOllamaThinkLevels), "low, medium, high");
}

TEST(ReasoningEffortTest, AFieldIsReadAsALevel) {
  const nlohmann::json object = {{"effort", "medium"}, {"other", nullptr}};
  const RequestObject reasoning(object, "reasoning");
  const std::optional<ReasoningEffort> effort = ParseReasoningEffort(reasoning, "effort");
  ASSERT_TRUE(effort.has_value());
  EXPECT_EQ(effort->level, "medium");
  EXPECT_EQ(effort->budget, 4096);
  // Absent and null are not asked for.
  EXPECT_EQ(ParseReasoningEffort(reasoning, "missing"), std::nullopt);
  EXPECT_EQ(ParseReasoningEffort(reasoning, "other"), std::nullopt);
}

class ChatReasoningEffortTest : public ::testing::Test {
 protected:
  static nlohmann::json Body() { return {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}; }
  int BudgetOf(const nlohmann::json& body) {
    return ParseChatRequest(body.dump(), policy_).generation.reasoning_budget;
  }
  // The 400 the body raises: its field, then its message.
  std::pair<std::string, std::string> ErrorOf(const nlohmann::json& body) {
    try {
      ParseChatRequest(body.dump(), policy_);
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      return {std::string(e.field()), e.what()};
    }
    return {"", "no error"};
  }

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

// reasoning_effort, as OpenAI's SDK, Open WebUI and LibreChat send it; null is not asked
// for. The model does not matter here: a model that does not reason ignores the budget.
TEST_F(ChatReasoningEffortTest, ReasoningEffortSetsTheBudget) {
  nlohmann::json body = Body();
  EXPECT_EQ(BudgetOf(body), -1);
  body["reasoning_effort"] = nullptr;
  EXPECT_EQ(BudgetOf(body), -1);
  for (const LevelBudget& entry : kReasoningEffortBudgets) {
    body["reasoning_effort"] = entry.level;
    EXPECT_EQ(BudgetOf(body), entry.budget) << entry.level;
  }
  policy_.chat_template = ChatTemplateKind::kThinking;
  body["reasoning_effort"] = "minimal";
  EXPECT_EQ(BudgetOf(body), 256);
}

// A budget in tokens says more than a level, whichever comes first in the body.
TEST_F(ChatReasoningEffortTest, ThinkingTokenBudgetWins) {
  nlohmann::json body = Body();
  body["reasoning_effort"] = "high";
  body["thinking_token_budget"] = 12;
  EXPECT_EQ(BudgetOf(body), 12);
  body["reasoning_effort"] = "none";
  EXPECT_EQ(BudgetOf(body), 12);
  // The level is checked all the same.
  body["reasoning_effort"] = "max";
  EXPECT_EQ(ErrorOf(body).first, "reasoning_effort");
}

TEST_F(ChatReasoningEffortTest, AnUnknownLevelIsA400ListingTheLevels) {
  nlohmann::json body = Body();
  body["reasoning_effort"] = "max";
  EXPECT_EQ(ErrorOf(body),
            std::make_pair(std::string("reasoning_effort"),
                           std::string("reasoning_effort: \"max\" is not one of none, minimal, "
                                       "low, medium, high, xhigh")));
  body["reasoning_effort"] = 2;
  EXPECT_EQ(ErrorOf(body),
            std::make_pair(std::string("reasoning_effort"),
                           std::string("reasoning_effort: expected a string, got integer")));
}

}  // namespace
}  // namespace qvl
