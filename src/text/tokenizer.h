// The byte-level BPE tokenizer of Qwen2/Qwen3 (and so Qwen3-VL), loaded from a Hugging
// Face tokenizer.json. Encode reproduces `tokenizers` exactly:
//   1. every added token (special or not: <|im_start|>, <think>, ...) that occurs
//      literally is split out first, leftmost then longest match, and never split;
//   2. the text between them is NFC-normalized,
//   3. cut into pieces by the Qwen2 regex (text/pretokenizer.h),
//   4. and each piece's UTF-8 bytes are merged by BPE rank (text/bpe.h).
// No BOS/EOS is ever added. Decode maps tokens back to bytes and replaces ill-formed
// UTF-8 with U+FFFD.
//
// Immutable after loading: all methods are const and safe to call from many threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe.h"
#include "text/token_index.h"

namespace qvl {

namespace text {
struct TokenizerDefinition;
}  // namespace text

class Tokenizer {
 public:
  // Loads tokenizer.json; throws Error(kNotFound / kIo) for an unreadable file and
  // Error(kCorrupt) naming the file and the field for a malformed or unsupported one.
  static Tokenizer FromFile(const std::string& tokenizer_json_path);
  // The same from the file's text; `source` names it in errors.
  static Tokenizer FromJson(std::string_view json, const std::string& source);

  // Token ids of `text`. Ill-formed UTF-8 is first replaced by U+FFFD, as a decoder of
  // the request would have done; throws Error(kTooLarge) for text of 2 GiB or more.
  std::vector<int32_t> Encode(std::string_view text) const;

  // Text of `ids`: the tokens' bytes concatenated, each ill-formed UTF-8 subsequence
  // replaced by U+FFFD. Ids that name no token (negative, or in the unused tail of the
  // model's embedding table) are skipped, as `tokenizers` does; with `skip_special`
  // the special added tokens are skipped too (non-special ones like <think> are kept).
  std::string Decode(std::span<const int32_t> ids, bool skip_special) const;

  // The raw bytes of one token (possibly part of a UTF-8 character); empty for an id
  // that names no token.
  std::string_view TokenBytes(int32_t id) const;

  // The token as written in tokenizer.json ("Ġhello", "<|im_end|>"), and back; -1 or
  // an empty view when there is no such token.
  int32_t TokenToId(std::string_view token) const;
  std::string_view IdToToken(int32_t id) const;

  // True for added tokens marked "special" (<|im_start|>, <|image_pad|>, ...).
  bool IsSpecial(int32_t id) const;

  // One past the largest token id (151669 for Qwen3: 151643 BPE tokens + 26 added).
  int32_t vocab_size() const { return static_cast<int32_t>(kinds_.size()); }

 private:
  enum class Kind : uint8_t { kNone, kRegular, kAdded, kSpecial };

  struct AddedMatch {
    size_t begin;  // text.size() when there is none
    size_t end;
    int32_t id;
  };

  Tokenizer() = default;

  // Loading, in order: the token arrays and indexes, the BPE tables, the added-token
  // matcher. Each step throws Error(kCorrupt) naming `source` and the field at fault.
  void StoreTokens(const text::TokenizerDefinition& definition, const std::string& source);
  std::array<int32_t, 256> ByteTokens(const std::string& source) const;
  std::vector<text::MergeRule> MergeRules(const text::TokenizerDefinition& definition,
                                          const std::string& source) const;
  void IndexAddedTokens();

  int32_t VocabId(std::string_view name) const;

  // The leftmost, then longest, added token at or after `pos`.
  AddedMatch FindAddedToken(std::string_view text, size_t pos) const;
  // Steps 2-4 for text between added tokens.
  void EncodeOrdinary(std::string_view text, std::string* scratch_text, text::BpeScratch* scratch,
                      std::vector<int32_t>* ids) const;

  // Per id, two spellings stored back to back in flat arrays: `names_` as in the file,
  // `bytes_` as decoded bytes; [offsets[id], offsets[id + 1]) delimits one token.
  std::vector<char> names_;
  std::vector<uint32_t> name_offsets_;
  std::vector<char> bytes_;
  std::vector<uint32_t> byte_offsets_;
  std::vector<Kind> kinds_;
  text::TokenIndex vocab_index_;  // BPE tokens
  text::TokenIndex added_index_;  // added tokens, which win over a BPE token of the same name
  text::BytePairEncoder bpe_;
  // Added token ids grouped by first byte, longest first, for FindAddedToken; the
  // group of byte b is [added_first_byte_offsets_[b], added_first_byte_offsets_[b + 1]).
  std::vector<int32_t> added_by_first_byte_;
  std::vector<uint32_t> added_first_byte_offsets_;
};

}  // namespace qvl
