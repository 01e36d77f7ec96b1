// Reads a Hugging Face tokenizer.json of the Qwen2/Qwen3 kind and checks that it
// describes exactly the pipeline Tokenizer implements: added tokens, NFC, the Qwen2
// split regex, byte-level BPE, byte-level decoding. The 151k-entry vocab and merge list
// are streamed (SAX) into flat lists instead of a JSON tree, which keeps loading the
// 5 MB file fast.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qvl::text {

// Token ids must be below this; it bounds the tables a malformed file can make us build
// (real vocabularies have at most a few hundred thousand entries).
inline constexpr int32_t kMaxTokenId = 1 << 21;

struct AddedTokenDefinition {
  int32_t id = 0;
  std::string content;  // matched literally in the raw text
  bool special = false;
};

struct TokenizerDefinition {
  std::vector<std::pair<std::string, int32_t>> vocab;       // model.vocab, byte alphabet
  std::vector<std::pair<std::string, std::string>> merges;  // model.merges, in rank order
  std::vector<AddedTokenDefinition> added_tokens;
};

// Parses tokenizer.json text; `source` names the file in errors. Throws Error(kCorrupt)
// "SOURCE: FIELD ..." for malformed JSON, a missing or mistyped field, or a setting qvl
// does not implement (a model type other than BPE, another normalizer or split regex).
TokenizerDefinition ParseTokenizerJson(std::string_view json, const std::string& source);

}  // namespace qvl::text
