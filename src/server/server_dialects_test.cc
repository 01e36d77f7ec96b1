#include "server/server_dialects.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "server/chat_request.h"
#include "server/chat_request_policy_for_test.h"
#include "server/completion_request.h"

namespace qvl {
namespace {

nlohmann::json Chat(nlohmann::json fields) {
  fields["messages"] = {{{"role", "user"}, {"content", "Hello"}}};
  return fields;
}
nlohmann::json Completion(nlohmann::json fields) {
  fields["prompt"] = "Hello";
  return fields;
}

// The message of the 400 `parse` raises, which must name `field`.
std::string ErrorOf(const std::function<void()>& parse, const std::string& field) {
  try {
    parse();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << field;
  return "";
}

class LlamaServerSamplingTest : public ::testing::Test {
 protected:
  std::string ChatError(const nlohmann::json& fields, const std::string& field) {
    return ErrorOf([&] { ParseChatRequest(Chat(fields).dump(), policy_); }, field);
  }
  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

// llama-server's clients (its web UI among them) send its name for the repetition
// penalty on the OpenAI routes; it was dropped, so the answer came unpenalized.
TEST_F(LlamaServerSamplingTest, RepeatPenaltyIsTheRepetitionPenalty) {
  EXPECT_EQ(ParseChatRequest(Chat({{"repeat_penalty", 1.3}}).dump(), policy_)
                .generation.sampling.repetition_penalty,
            1.3f);
  EXPECT_EQ(ParseCompletionRequest(Completion({{"repeat_penalty", 1.2}}).dump(), policy_)
                .generations[0]
                .sampling.repetition_penalty,
            1.2f);
  // Both names at one value is one setting; at two values the request is ambiguous.
  EXPECT_EQ(
      ParseChatRequest(Chat({{"repeat_penalty", 1.1}, {"repetition_penalty", 1.1}}).dump(), policy_)
          .generation.sampling.repetition_penalty,
      1.1f);
  EXPECT_EQ(ChatError({{"repeat_penalty", 1.1}, {"repetition_penalty", 1.2}}, "repeat_penalty"),
            "repeat_penalty: cannot be combined with repetition_penalty (llama-server's name for "
            "it) at another value");
  // The repetition penalty's range and type, under the name the client used.
  EXPECT_NE(ChatError({{"repeat_penalty", 0}}, "repeat_penalty").find("repeat_penalty: "),
            std::string::npos);
  ChatError({{"repeat_penalty", "x"}}, "repeat_penalty");
  EXPECT_FALSE(ParseChatRequest(Chat({}).dump(), policy_)
                   .generation.sampling.repetition_penalty.has_value());
}

// The samplers llama-server has and qvl does not: what its web UI sends by default (each
// turned off) is taken, any setting that would change the answer is a 400 naming it.
// typical_p, top_n_sigma and XTC are qvl's too: read, within their ranges.
TEST_F(LlamaServerSamplingTest, OtherSamplersAreTakenOnlyWhenOff) {
  const nlohmann::json web_ui_defaults = {
      {"typical_p", 1},       {"mirostat", 0},          {"dynatemp_range", 0},
      {"xtc_probability", 0}, {"dry_multiplier", 0},    {"repeat_last_n", 64},
      {"repeat_penalty", 1},  {"xtc_threshold", 0.1},   {"dynatemp_exponent", 1},
      {"dry_base", 1.75},     {"dry_allowed_length", 2}};
  EXPECT_EQ(ParseChatRequest(Chat(web_ui_defaults).dump(), policy_)
                .generation.sampling.repetition_penalty,
            1.0f);
  const SamplingParams read = ParseChatRequest(Chat({{"typical_p", 0.9},
                                                     {"top_n_sigma", 1.5},
                                                     {"xtc_probability", 0.5},
                                                     {"xtc_threshold", 0.2}})
                                                   .dump(),
                                               policy_)
                                  .generation.sampling;
  EXPECT_EQ(read.typical_p, 0.9f);
  EXPECT_EQ(read.top_n_sigma, 1.5f);
  EXPECT_EQ(read.xtc_probability, 0.5f);
  EXPECT_EQ(read.xtc_threshold, 0.2f);
  EXPECT_EQ(ChatError({{"xtc_probability", 2}}, "xtc_probability"),
            "xtc_probability: must be between 0 and 1, got 2");
  const SamplingParams mirostat =
      ParseChatRequest(Chat({{"mirostat", 2}, {"mirostat_tau", 4}, {"mirostat_eta", 0.2}}).dump(),
                       policy_)
          .generation.sampling;
  EXPECT_EQ(mirostat.mirostat, 2);
  EXPECT_EQ(mirostat.mirostat_tau, 4.0f);
  EXPECT_EQ(mirostat.mirostat_eta, 0.2f);
  EXPECT_EQ(ChatError({{"mirostat", 3}}, "mirostat"), "mirostat: must be between 0 and 2, got 3");
  const SamplingParams dynatemp =
      ParseChatRequest(Chat({{"dynatemp_range", 0.5}, {"dynatemp_exponent", 2}}).dump(), policy_)
          .generation.sampling;
  EXPECT_EQ(dynatemp.dynatemp_range, 0.5f);
  EXPECT_EQ(dynatemp.dynatemp_exponent, 2.0f);
  EXPECT_EQ(ChatError({{"dynatemp_range", 3}}, "dynatemp_range"),
            "dynatemp_range: must be between 0 and 2, got 3");
  ChatError({{"dry_multiplier", 0.8}}, "dry_multiplier");
  ChatError({{"typical_p", "x"}}, "typical_p");
  EXPECT_EQ(ChatError({{"n_probs", 5}}, "n_probs"),
            "n_probs: is not supported (token probabilities come with logprobs and "
            "top_logprobs); leave it out or at 0");
  // The penalty's window: qvl's is the whole context (-1); another one only matters, and
  // is refused, beside a penalty that is on.
  EXPECT_EQ(ChatError({{"repeat_penalty", 1.1}, {"repeat_last_n", 64}}, "repeat_last_n"),
            "repeat_last_n: is not supported beside a repetition penalty (qvl's counts every "
            "token of the prompt and the answer); leave it out or at -1");
  EXPECT_EQ(
      ParseChatRequest(Chat({{"repetition_penalty", 1.1}, {"repeat_last_n", -1}}).dump(), policy_)
          .generation.sampling.repetition_penalty,
      1.1f);
  ChatError({{"repeat_last_n", "x"}}, "repeat_last_n");
  ErrorOf(
      [&] {
        ParseCompletionRequest(Completion({{"dry_multiplier", 1}}).dump(), policy_);
      },
      "dry_multiplier");
}

// llama-server's chain, as its web UI sends it (a string of letters) or as names: the
// links qvl has, in the client's order; those it does not have (off) are no link.
TEST_F(LlamaServerSamplingTest, SamplersAreTheChainInTheClientsOrder) {
  using S = SamplerStep;
  const auto chain = [&](const nlohmann::json& samplers) {
    return ParseChatRequest(Chat({{"samplers", samplers}}).dump(), policy_)
        .generation.sampling.chain.value();
  };
  // The web UI's letters leave top_n_sigma out; the server's default names it.
  EXPECT_EQ(chain("edkypmxt"), (std::vector<S>{S::kPenalties, S::kTopK, S::kTypicalP, S::kTopP,
                                               S::kMinP, S::kXtc, S::kTemperature}));
  EXPECT_EQ(chain({"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc",
                   "temperature"}),
            (std::vector<S>{S::kPenalties, S::kTopNSigma, S::kTopK, S::kTypicalP, S::kTopP,
                            S::kMinP, S::kXtc, S::kTemperature}));
  EXPECT_EQ(chain({"temp", "top-k", "nucleus", "min-p"}),
            (std::vector<S>{S::kTemperature, S::kTopK, S::kTopP, S::kMinP}));
  EXPECT_EQ(chain(""), std::vector<S>{});
  EXPECT_EQ(ParseCompletionRequest(Completion({{"samplers", "tk"}}).dump(), policy_)
                .generations[0]
                .sampling.chain.value(),
            (std::vector<S>{S::kTemperature, S::kTopK}));
  EXPECT_FALSE(ParseChatRequest(Chat({}).dump(), policy_).generation.sampling.chain.has_value());
  EXPECT_EQ(ChatError({{"samplers", {"top_k", "mirostat"}}}, "samplers"),
            "samplers: unknown sampler \"mirostat\"; qvl has penalties (e), top_k (k), top_p (p), "
            "min_p (m), temperature (t), typ_p (y), xtc (x) and top_n_sigma (s), and takes dry "
            "and infill while they are off");
  EXPECT_EQ(ChatError({{"samplers", "kpk"}}, "samplers"), "samplers: lists top_k twice");
  EXPECT_EQ(ChatError({{"samplers", {"top_k", "top-k"}}}, "samplers"),
            "samplers: lists top_k twice");
  EXPECT_EQ(ChatError({{"samplers", {"top_k", 3}}}, "samplers[1]"),
            "samplers[1]: expected a sampler's name, got integer");
  EXPECT_EQ(ChatError({{"samplers", 5}}, "samplers"),
            "samplers: expected a list of sampler names or a string of their letters, got "
            "integer");
  EXPECT_EQ(ChatError({{"top_n_sigma", 101}}, "top_n_sigma"),
            "top_n_sigma: must be between -1 and 100, got 101");
  EXPECT_FALSE(
      ParseChatRequest(Chat({{"top_n_sigma", -1.0}}).dump(), policy_).generation.sampling.chain);
}

// vLLM's prompt_logprobs: the engine's prompt_logprobs (the most any field asks for),
// refused with stream as vLLM refuses it, and in range.
TEST_F(LlamaServerSamplingTest, PromptLogprobsAreVllmsOnChat) {
  EXPECT_EQ(ParseChatRequest(Chat({}).dump(), policy_).generation.prompt_logprobs, -1);
  EXPECT_EQ(ParseChatRequest(Chat({{"prompt_logprobs", nullptr}}).dump(), policy_)
                .generation.prompt_logprobs,
            -1);
  EXPECT_EQ(
      ParseChatRequest(Chat({{"prompt_logprobs", 3}}).dump(), policy_).generation.prompt_logprobs,
      3);
  EXPECT_EQ(ChatError({{"prompt_logprobs", 21}}, "prompt_logprobs"),
            "prompt_logprobs: must be between 0 and 20, got 21");
  EXPECT_EQ(ChatError({{"prompt_logprobs", 1}, {"stream", true}}, "prompt_logprobs"),
            "prompt_logprobs: is not available with stream true (as in vLLM): ask without "
            "streaming");
}

}  // namespace
}  // namespace qvl
