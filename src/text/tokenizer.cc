#include "text/tokenizer.h"

#include <algorithm>
#include <array>
#include <climits>

#include "base/error.h"
#include "base/mapped_file.h"
#include "text/byte_alphabet.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_json.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace qvl {
namespace {

using text::TokenizerDefinition;

// The bytes a vocab token stands for. A token with a character outside the byte
// alphabet is taken as its own UTF-8, as the `tokenizers` ByteLevel decoder does.
void AppendTokenBytes(std::string_view name, std::vector<char>* out) {
  const size_t start = out->size();
  for (size_t pos = 0; pos < name.size();) {
    const text::Utf8Sequence seq = text::ScanUtf8(name, pos);
    const int byte = seq.status == text::Utf8Status::kValid
                         ? text::CharToByte(text::DecodeUtf8(name, pos, seq.length))
                         : -1;
    if (byte < 0) {
      out->resize(start);
      out->insert(out->end(), name.begin(), name.end());
      return;
    }
    out->push_back(static_cast<char>(byte));
    pos += seq.length;
  }
}

bool IsAscii(std::string_view text) {
  unsigned char any = 0;
  for (const char c : text) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

}  // namespace

Tokenizer Tokenizer::FromFile(const std::string& tokenizer_json_path) {
  return FromJson(ReadFileToString(tokenizer_json_path), tokenizer_json_path);
}

Tokenizer Tokenizer::FromJson(std::string_view json, const std::string& source) {
  const TokenizerDefinition definition = text::ParseTokenizerJson(json, source);
  Tokenizer tokenizer;
  tokenizer.StoreTokens(definition, source);
  tokenizer.bpe_ =
      text::BytePairEncoder(tokenizer.ByteTokens(source), tokenizer.MergeRules(definition, source));
  tokenizer.IndexAddedTokens();
  return tokenizer;
}

void Tokenizer::StoreTokens(const TokenizerDefinition& definition, const std::string& source) {
  // One name and kind per id; ids may leave gaps.
  int32_t max_id = -1;
  for (const auto& [name, id] : definition.vocab) max_id = std::max(max_id, id);
  for (const auto& token : definition.added_tokens) max_id = std::max(max_id, token.id);
  const auto num_ids = static_cast<size_t>(max_id + 1);
  std::vector<std::string_view> names(num_ids);
  kinds_.assign(num_ids, Kind::kNone);
  for (const auto& [name, id] : definition.vocab) {
    if (kinds_[id] != Kind::kNone) {
      Fail(ErrorCode::kCorrupt, source, ": model.vocab gives id ", id, " to both \"", names[id],
           "\" and \"", name, "\"");
    }
    names[id] = name;
    kinds_[id] = Kind::kRegular;
  }
  for (size_t i = 0; i < definition.added_tokens.size(); ++i) {
    const text::AddedTokenDefinition& token = definition.added_tokens[i];
    // A file may list a vocab token again as an added token, with the same id.
    if (kinds_[token.id] != Kind::kNone &&
        (kinds_[token.id] != Kind::kRegular || names[token.id] != token.content)) {
      Fail(ErrorCode::kCorrupt, source, ": added_tokens[", i, "] reuses id ", token.id, " of \"",
           names[token.id], "\"");
    }
    names[token.id] = token.content;
    kinds_[token.id] = token.special ? Kind::kSpecial : Kind::kAdded;
  }

  name_offsets_.assign(1, 0);
  byte_offsets_.assign(1, 0);
  name_offsets_.reserve(num_ids + 1);
  byte_offsets_.reserve(num_ids + 1);
  for (size_t id = 0; id < num_ids; ++id) {
    names_.insert(names_.end(), names[id].begin(), names[id].end());
    if (kinds_[id] == Kind::kRegular) {
      AppendTokenBytes(names[id], &bytes_);
    } else {
      bytes_.insert(bytes_.end(), names[id].begin(), names[id].end());
    }
    if (names_.size() > UINT32_MAX || bytes_.size() > UINT32_MAX) {
      Fail(ErrorCode::kCorrupt, source, ": the vocabulary is larger than 4 GiB");
    }
    name_offsets_.push_back(static_cast<uint32_t>(names_.size()));
    byte_offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }

  const auto name_of = [this](int32_t id) { return IdToToken(id); };
  vocab_index_ = text::TokenIndex(definition.vocab.size());
  added_index_ = text::TokenIndex(definition.added_tokens.size());
  for (int32_t id = 0; id < vocab_size(); ++id) {
    if (kinds_[id] == Kind::kNone) continue;
    const bool added = kinds_[id] != Kind::kRegular;
    if ((added ? added_index_ : vocab_index_).Insert(IdToToken(id), id, name_of) != id) {
      Fail(ErrorCode::kCorrupt, source, added ? ": added_tokens list \"" : ": model.vocab lists \"",
           names[id], "\" twice");
    }
  }
}

int32_t Tokenizer::VocabId(std::string_view name) const {
  return vocab_index_.Find(name, [this](int32_t id) { return IdToToken(id); });
}

std::array<int32_t, 256> Tokenizer::ByteTokens(const std::string& source) const {
  std::array<int32_t, 256> byte_tokens;
  for (int byte = 0; byte < 256; ++byte) {
    std::string name;
    text::AppendUtf8(text::kByteToChar[byte], &name);
    byte_tokens[byte] = VocabId(name);
    if (byte_tokens[byte] < 0) {
      Fail(ErrorCode::kCorrupt, source, ": model.vocab lacks the token \"", name, "\" of byte ",
           byte);
    }
  }
  return byte_tokens;
}

std::vector<text::MergeRule> Tokenizer::MergeRules(const TokenizerDefinition& definition,
                                                   const std::string& source) const {
  std::vector<text::MergeRule> rules;
  rules.reserve(definition.merges.size());
  std::string joined;
  for (size_t i = 0; i < definition.merges.size(); ++i) {
    const auto& [left, right] = definition.merges[i];
    joined.assign(left).append(right);
    const text::MergeRule rule{VocabId(left), VocabId(right), VocabId(joined)};
    for (const auto& [part, id] : {std::pair<std::string_view, int32_t>{left, rule.left},
                                   {right, rule.right},
                                   {joined, rule.merged}}) {
      if (id < 0) {
        Fail(ErrorCode::kCorrupt, source, ": model.merges[", i, "] needs \"", part,
             "\", which is not in model.vocab");
      }
    }
    rules.push_back(rule);
  }
  return rules;
}

void Tokenizer::IndexAddedTokens() {
  added_by_first_byte_.clear();
  for (int32_t id = 0; id < vocab_size(); ++id) {
    if (kinds_[id] == Kind::kAdded || kinds_[id] == Kind::kSpecial) {
      added_by_first_byte_.push_back(id);
    }
  }
  const auto first_byte = [this](int32_t id) { return static_cast<uint8_t>(IdToToken(id)[0]); };
  // Longest first within a group, so the first hit is the longest match.
  std::sort(added_by_first_byte_.begin(), added_by_first_byte_.end(), [&](int32_t a, int32_t b) {
    if (first_byte(a) != first_byte(b)) return first_byte(a) < first_byte(b);
    if (IdToToken(a).size() != IdToToken(b).size()) {
      return IdToToken(a).size() > IdToToken(b).size();
    }
    return a < b;
  });
  added_first_byte_offsets_.assign(257, 0);
  for (const int32_t id : added_by_first_byte_) ++added_first_byte_offsets_[first_byte(id) + 1];
  for (size_t b = 1; b <= 256; ++b) {
    added_first_byte_offsets_[b] += added_first_byte_offsets_[b - 1];
  }
}

Tokenizer::AddedMatch Tokenizer::FindAddedToken(std::string_view text, size_t pos) const {
  for (size_t i = pos; i < text.size(); ++i) {
    const auto first = static_cast<uint8_t>(text[i]);
    const uint32_t end = added_first_byte_offsets_[first + 1];
    for (uint32_t k = added_first_byte_offsets_[first]; k < end; ++k) {
      const int32_t id = added_by_first_byte_[k];
      const std::string_view content = IdToToken(id);
      if (text.compare(i, content.size(), content) == 0) return {i, i + content.size(), id};
    }
  }
  return {text.size(), text.size(), -1};
}

void Tokenizer::EncodeOrdinary(std::string_view text, std::string* scratch_text,
                               text::BpeScratch* scratch, std::vector<int32_t>* ids) const {
  if (text.empty()) return;
  if (!IsAscii(text)) {
    scratch_text->clear();
    text::AppendNfc(text, scratch_text);
    text = *scratch_text;
  }
  text::ForEachPiece(text, [&](std::string_view piece) { bpe_.Encode(piece, scratch, ids); });
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text) const {
  std::string valid;
  if (!text::IsValidUtf8(text)) {
    text::AppendReplacingInvalidUtf8(text, &valid);
    text = valid;
  }
  if (text.size() > INT32_MAX) {
    Fail(ErrorCode::kTooLarge, "text to tokenize is ", text.size(), " bytes, more than 2 GiB");
  }

  std::vector<int32_t> ids;
  ids.reserve(text.size() / 4 + 16);
  std::string normalized;
  text::BpeScratch scratch;
  for (size_t pos = 0; pos < text.size();) {
    const AddedMatch match = FindAddedToken(text, pos);
    EncodeOrdinary(text.substr(pos, match.begin - pos), &normalized, &scratch, &ids);
    if (match.id < 0) break;
    ids.push_back(match.id);
    pos = match.end;
  }
  return ids;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (const int32_t id : ids) {
    if (skip_special && IsSpecial(id)) continue;
    bytes.append(TokenBytes(id));
  }
  if (text::IsValidUtf8(bytes)) return bytes;
  std::string valid;
  text::AppendReplacingInvalidUtf8(bytes, &valid);
  return valid;
}

std::string_view Tokenizer::TokenBytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return {bytes_.data() + byte_offsets_[id], byte_offsets_[id + 1] - byte_offsets_[id]};
}

int32_t Tokenizer::TokenToId(std::string_view token) const {
  // Added tokens first, as in `tokenizers`.
  const int32_t added = added_index_.Find(token, [this](int32_t id) { return IdToToken(id); });
  return added >= 0 ? added : VocabId(token);
}

std::string_view Tokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return {names_.data() + name_offsets_[id], name_offsets_[id + 1] - name_offsets_[id]};
}

bool Tokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < vocab_size() && kinds_[id] == Kind::kSpecial;
}

}  // namespace qvl
