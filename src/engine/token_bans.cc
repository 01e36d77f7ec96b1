#include "engine/token_bans.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "base/field_error.h"
#include "engine/request_ranges.h"

namespace qvl {
namespace {

std::vector<uint32_t> AllowedMask(const std::vector<int32_t>& ids, int64_t vocab) {
  std::vector<uint32_t> mask(static_cast<size_t>((vocab + 31) / 32));
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    CheckTokenId(StrCat("allowed_token_ids[", i, "]"), id, vocab);
    mask[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
  }
  return mask;
}

std::vector<std::vector<int32_t>> BadWordSequences(const std::vector<std::string>& words,
                                                   const Tokenizer& tokenizer) {
  std::vector<std::vector<int32_t>> out;
  size_t tokens = 0;
  auto add = [&](std::vector<int32_t> ids) {
    tokens += ids.size();
    out.push_back(std::move(ids));
    if (out.size() > static_cast<size_t>(request_ranges::kMaxBadWordSequences) ||
        tokens > static_cast<size_t>(request_ranges::kMaxBadWordTokens)) {
      FailField(ErrorCode::kInvalidArgument, "bad_words", "at most ",
                request_ranges::kMaxBadWordSequences, " token sequences of ",
                request_ranges::kMaxBadWordTokens,
                " tokens in all are supported (each word counts once as it is and once after a "
                "space)");
    }
  };
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    // Python's str.lstrip(): ASCII whitespace here, as the words' other spaces are kept.
    word.remove_prefix(std::min(word.find_first_not_of(" \t\n\r\v\f"), word.size()));
    if (word.empty()) {
      FailField(ErrorCode::kInvalidArgument, StrCat("bad_words[", i, "]"),
                "must hold a word, not only whitespace");
    }
    std::vector<int32_t> bare = tokenizer.Encode(word);
    std::vector<int32_t> spaced = tokenizer.Encode(StrCat(" ", word));
    const bool distinct = spaced.size() == bare.size() && spaced.front() != bare.front();
    add(std::move(bare));
    if (distinct) add(std::move(spaced));
  }
  return out;
}

}  // namespace

TokenBans PrepareTokenBans(const GenerationRequest& request, const Tokenizer& tokenizer,
                           int64_t vocab) {
  TokenBans bans;
  if (!request.allowed_token_ids.empty()) {
    if (request.grammar != nullptr) {
      FailField(ErrorCode::kInvalidArgument, "allowed_token_ids",
                "cannot be combined with response_format, guided decoding or a forced tool call");
    }
    bans.allowed = AllowedMask(request.allowed_token_ids, vocab);
  }
  bans.bad_words = BadWordSequences(request.bad_words, tokenizer);
  return bans;
}

}  // namespace qvl
