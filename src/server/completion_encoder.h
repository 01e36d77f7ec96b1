// Turns the engine's updates for one request into the bytes of the HTTP response: a
// server-sent event stream in OpenAI's chunk format, or one JSON completion at the end.
#pragma once

#include <string>
#include <vector>

#include "engine/request.h"
#include "server/openai_format.h"
#include "server/response_encoder.h"

namespace qvl {

struct EncoderOptions {
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
};

class CompletionEncoder : public ResponseEncoder {
 public:
  CompletionEncoder(CompletionIdentity identity, const EncoderOptions& options);

  // What to send before any update: the stream's role chunk; "" when not streaming.
  std::string Start() override;
  // What to send for `update` (may be ""). After the final update the response is
  // complete: streams end with "data: [DONE]".
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }

 private:
  std::string EncodeStreamed(GenerationUpdate&& update);
  std::string EncodeFinal(GenerationUpdate&& update);

  CompletionIdentity identity_;
  EncoderOptions options_;
  std::string text_;                    // non-streamed: the whole answer
  std::vector<GeneratedToken> tokens_;  // non-streamed with logprobs
  bool finished_ = false;
};

}  // namespace qvl
