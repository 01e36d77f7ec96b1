// Turns a GenerationRequest into a PreparedRequest: everything a request can get wrong is
// found here, on the submitting thread, before the engine spends any time on it.
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "engine/prepared_request.h"
#include "image/image_processor.h"
#include "model/config.h"
#include "text/tokenizer.h"

namespace qvl {

class RequestPreparer {
 public:
  RequestPreparer(const ModelConfig& model, const GenerationConfig& generation,
                  const Tokenizer& tokenizer, const ImageProcessorParams& image_params,
                  const EngineOptions& options);

  // Throws Error: kInvalidArgument for bad images or parameters and prompts over the
  // context, kTooLarge for images over the byte/pixel limits.
  PreparedRequest Prepare(const GenerationRequest& request, uint64_t fallback_seed) const;

  // Tokens that end an answer: generation_config.json's and config.json's.
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }

 private:
  ImageBudget BudgetFor(const ImageBudgetRequest& request) const;
  // Throws FieldError naming prompt[i] for an id outside the vocabulary or an image pad.
  void CheckPromptTokens(const std::vector<int32_t>& ids) const;

  const ModelConfig& model_;
  const GenerationConfig& generation_;
  const Tokenizer& tokenizer_;
  ImageProcessorParams image_params_;
  ImageLimits limits_;
  EngineOptions options_;
  std::vector<int32_t> eos_ids_;
};

}  // namespace qvl
