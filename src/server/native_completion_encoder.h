// llama-server's native /completion response. Not streamed: one result object per prompt
// ({content, tokens, id_slot, stop, model, generation_settings, tokens_predicted,
// tokens_evaluated, prompt, has_new_line, truncated, stop_type, stopping_word,
// tokens_cached, timings, and completion_probabilities with n_probs}), an array of them
// for several prompts. Streamed: server-sent events, one per piece of text ({content,
// tokens (always, as llama-server streams them), stop: false, index}, with its
// completion_probabilities), then per prompt a final event with stop true, content ""
// and the result's other fields; no "data: [DONE]", as llama-server's native stream has
// none. Updates of prompt i arrive as choice i.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/openai_format.h"
#include "server/response_encoder.h"

namespace qvl {

struct NativeEncoderOptions {
  bool stream = false;
  // Streamed: updates with GenerationUpdate::progress become events with prompt_progress.
  bool progress = false;
  int n_probs = 0;  // > 0: completion_probabilities with that many alternatives per token
  bool return_tokens = false;
  // n_predict 0: the engine's one token is left out (no content, tokens_predicted 0,
  // stop_type "limit").
  bool prompt_only = false;
  std::string model;
  // The request's sampling and limits (GenerationSettingsJson), the same in every result.
  nlohmann::json generation_settings;
  // Each prompt's text (the `prompt` of its result); one per prompt.
  std::vector<std::string> prompts;
};

class NativeCompletionEncoder : public ResponseEncoder {
 public:
  explicit NativeCompletionEncoder(NativeEncoderOptions options);

  std::string Start() override { return ""; }
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return unfinished_ == 0; }
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  struct Result {
    std::string content;  // non-streamed: the whole answer
    nlohmann::json tokens = nlohmann::json::array();
    nlohmann::json probabilities = nlohmann::json::array();
    bool has_new_line = false;
    bool finished = false;
  };

  // A streamed event or a result's fields that every object has.
  nlohmann::json Object(int index, const std::string& content, nlohmann::json tokens,
                        bool stop) const;
  // The final fields of prompt `index`'s result, ended by `update`.
  nlohmann::json FinalObject(int index, const Result& result, const GenerationUpdate& update) const;

  NativeEncoderOptions options_;
  std::vector<Result> results_;
  std::vector<nlohmann::json> finals_;  // non-streamed: each prompt's result once finished
  int unfinished_;
  GenerationUpdate summary_;  // the request as a whole, once finished
};

// llama-server's timings (cache_n, prompt_n, prompt_ms, prompt_per_token_ms,
// prompt_per_second, predicted_n, predicted_ms, predicted_per_token_ms,
// predicted_per_second) beside qvl's own (TimingsJson).
nlohmann::json LlamaServerTimingsJson(const GenerationUpdate& final_update, double upload_ms);

}  // namespace qvl
