// libFuzzer target: Encode takes any bytes (ill-formed UTF-8, huge runs, stray added
// tokens) with the real Qwen3 tokenizer of the fixtures, loaded once. Every id is a real
// token, Decode gives well-formed UTF-8, and it gives back ASCII input exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "text/test_tokenizer.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const qvl::Tokenizer& tokenizer = qvl::QwenTokenizerForTest();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<int32_t> ids = tokenizer.Encode(text);
  for (const int32_t id : ids) {
    if (tokenizer.TokenBytes(id).empty()) std::abort();
  }
  const std::string decoded = tokenizer.Decode(ids, false);
  if (!qvl::text::IsValidUtf8(decoded)) std::abort();
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii && decoded != text) std::abort();
  return 0;
}
