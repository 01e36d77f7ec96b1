// Incremental detokenizer for generated tokens: each Feed returns the text that the new
// token completes, holding back the bytes of a UTF-8 character that later tokens will
// finish (an emoji or a rare CJK character is often split over byte tokens). All Feed
// results plus the final Flush, concatenated, equal Tokenizer::Decode of the same ids.
#pragma once

#include <cstdint>
#include <string>

#include "text/tokenizer.h"

namespace qvl {

class StreamDecoder {
 public:
  // `tokenizer` must outlive the decoder. With `skip_special`, special added tokens
  // (<|im_end|>, ...) produce no text.
  StreamDecoder(const Tokenizer& tokenizer, bool skip_special)
      : tokenizer_(&tokenizer), skip_special_(skip_special) {}

  // The text completed by `id`; ill-formed UTF-8 becomes U+FFFD as soon as it is known
  // to be ill-formed.
  std::string Feed(int32_t id);

  // The held-back bytes at the end of the stream (as U+FFFD); the decoder is then empty
  // and can start a new stream.
  std::string Flush();

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::string pending_;  // an incomplete UTF-8 character, at most 3 bytes
};

}  // namespace qvl
