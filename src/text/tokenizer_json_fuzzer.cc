// libFuzzer target: tokenizer.json loading must reject any malformed input with an
// Error and never crash, hang or allocate without bound. A tokenizer that loads must
// then work: it encodes a fixed text whose ids it can decode, and every id it names maps
// back to a token (not necessarily the same id: an added token wins over a BPE token of
// the same name, as in `tokenizers`). Seeds: small tokenizer.json files of the real format
// (fuzz_corpus/tokenizer_json_fuzzer).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    const qvl::Tokenizer tokenizer = qvl::Tokenizer::FromJson(json, "fuzz/tokenizer.json");
    const std::string text = "Hello, world! <|im_start|> in on \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80";
    const std::vector<int32_t> ids = tokenizer.Encode(text);
    for (const int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
    }
    // Byte-level BPE is lossless on well-formed UTF-8.
    if (tokenizer.Decode(ids, false) != text) std::abort();
    for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
      const std::string_view name = tokenizer.IdToToken(id);
      if (!name.empty() && tokenizer.TokenToId(name) < 0) std::abort();
    }
  } catch (const qvl::Error&) {
  }
  return 0;
}
