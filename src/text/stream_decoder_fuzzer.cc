// libFuzzer target: the incremental detokenizer on arbitrary id sequences with the real
// Qwen3 tokenizer. The Feed results plus Flush must equal Decode of the same ids, with
// and without skipping special tokens, and must be well-formed UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "text/stream_decoder.h"
#include "text/test_tokenizer.h"
#include "text/utf8.h"

namespace {

// Two bytes per id, read so that most ids land where UTF-8 gets split: the byte tokens
// (0-255), multi-byte BPE pieces, the added tokens at the end and ids that name nothing.
std::vector<int32_t> IdsFromBytes(const uint8_t* data, size_t size, int32_t vocab_size) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const uint16_t raw = static_cast<uint16_t>(data[i] << 8 | data[i + 1]);
    const int32_t value = raw & 0x3FFF;
    switch (raw >> 14) {
      case 0:
        ids.push_back(value & 0xFF);  // byte tokens
        break;
      case 1:
        ids.push_back(value);  // the first 16k tokens: common pieces
        break;
      case 2:
        ids.push_back(vocab_size - 64 + (value & 0x7F));  // added tokens and past the end
        break;
      default:
        ids.push_back(static_cast<int32_t>(value * 10 % (vocab_size + 100)) - 50);
        break;
    }
  }
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const qvl::Tokenizer& tokenizer = qvl::QwenTokenizerForTest();
  const std::vector<int32_t> ids = IdsFromBytes(data, size, tokenizer.vocab_size());
  for (const bool skip_special : {false, true}) {
    qvl::StreamDecoder decoder(tokenizer, skip_special);
    std::string streamed;
    for (const int32_t id : ids) streamed += decoder.Feed(id);
    streamed += decoder.Flush();
    if (streamed != tokenizer.Decode(ids, skip_special)) std::abort();
    if (!qvl::text::IsValidUtf8(streamed)) std::abort();
    // A flushed decoder starts afresh.
    if (!decoder.Flush().empty()) std::abort();
  }
  return 0;
}
