// Turns the final updates of one embeddings request's inputs into its one JSON body:
//   OpenAI  {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}],
//            "model","usage":{"prompt_tokens","total_tokens"}}
//   Ollama  {"model","embeddings":[[...]],"total_duration","load_duration",
//            "prompt_eval_count"}
//   Ollama's older /api/embeddings  {"embedding":[...]}: its one input's, [] with none
// With `dimensions` each embedding keeps its first N values, scaled back to unit length
// (as OpenAI's text-embedding-3 and Qwen3-Embedding's Matryoshka training mean them to be
// cut). Values are written with the fewest digits that read back as the same float32;
// OpenAI's base64 is the little-endian float32 bytes. When an input was cancelled or
// failed, the body is the error alone (no partial data): OpenAI's {"error": {"message",
// "type", "param", "code"}} (CutShortErrorJson), Ollama's (both routes) {"error": "<reason>"}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/response_encoder.h"

namespace qvl {

// kOllamaLegacy is /api/embeddings, at most one input.
enum class EmbeddingsDialect { kOpenAI, kOllama, kOllamaLegacy };

// Collects the final updates of a request's inputs (update.choice = the input's index, the
// route sets it) and, once every input has finished, writes the one JSON body.
class EmbeddingsEncoder : public ResponseEncoder {
 public:
  // `dimensions` 0 keeps every value. `inputs` 0 (Ollama's empty input) is finished at once.
  EmbeddingsEncoder(EmbeddingsDialect dialect, std::string model, int inputs, bool base64,
                    int64_t dimensions);

  // "", but with no inputs the whole body (no embeddings), as Ollama answers an empty
  // input.
  std::string Start() override;
  // "" until the final update of the last input, then the body. Other updates, and
  // updates for an input out of range or already finished, are ignored.
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  // Once finished: usage summed over the inputs, the timings of the input that took
  // longest (the request's wall time), finish_reason kStop or the first cut-short
  // input's reason with its error.
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  std::string Body() const;
  std::string ErrorBody() const;

  EmbeddingsDialect dialect_;
  std::string model_;
  bool base64_;
  int64_t dimensions_;
  std::vector<std::vector<float>> embeddings_;
  std::vector<bool> done_;
  int unfinished_;
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
