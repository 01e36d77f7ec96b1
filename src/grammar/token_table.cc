#include "grammar/token_table.h"

#include <algorithm>

#include "base/error.h"

namespace qvl {

bool TokenTable::IsEos(int32_t id) const {
  return std::find(eos_ids_.begin(), eos_ids_.end(), id) != eos_ids_.end();
}

std::string_view TokenTable::Bytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) + 1 >= byte_offsets_.size()) return {};
  return std::string_view(bytes_.data() + byte_offsets_[id],
                          byte_offsets_[id + 1] - byte_offsets_[id]);
}

std::shared_ptr<const TokenTable> BuildTokenTable(const Tokenizer& tokenizer, int64_t vocab_rows,
                                                  std::span<const int32_t> eos_ids) {
  auto table = std::make_shared<TokenTable>();
  table->vocab_rows_ = vocab_rows;
  for (int32_t id : eos_ids) {
    if (id < 0 || id >= vocab_rows) {
      Fail(ErrorCode::kInvalidArgument, "eos id ", id, " is outside the vocabulary of ", vocab_rows,
           " rows");
    }
    table->eos_ids_.push_back(id);
  }

  const int32_t limit = static_cast<int32_t>(std::min<int64_t>(tokenizer.vocab_size(), vocab_rows));
  std::vector<int32_t> ids;
  table->byte_offsets_.push_back(0);
  for (int32_t id = 0; id < limit; ++id) {
    if (!tokenizer.IsSpecial(id) && !table->IsEos(id)) {
      const std::string_view bytes = tokenizer.TokenBytes(id);
      table->bytes_.insert(table->bytes_.end(), bytes.begin(), bytes.end());
      if (!bytes.empty() && bytes.size() <= TokenTable::kMaxTokenBytes) ids.push_back(id);
    }
    table->byte_offsets_.push_back(static_cast<uint32_t>(table->bytes_.size()));
  }
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    const std::string_view x = table->Bytes(a), y = table->Bytes(b);
    return x != y ? x < y : a < b;
  });

  // Depth-first layout from the sorted spellings: a token's nodes are its bytes past the
  // prefix it shares with the previous token.
  std::vector<int32_t> open;  // node index at each depth of the current path
  std::string_view previous;
  const auto close_to = [&](size_t depth) {
    while (open.size() > depth) {
      table->nodes_[open.back()].subtree_end = static_cast<int32_t>(table->nodes_.size());
      open.pop_back();
    }
  };
  for (int32_t id : ids) {
    const std::string_view bytes = table->Bytes(id);
    size_t shared = 0;
    while (shared < bytes.size() && shared < previous.size() && shared < open.size() &&
           bytes[shared] == previous[shared]) {
      ++shared;
    }
    close_to(shared);
    for (size_t d = shared; d < bytes.size(); ++d) {
      table->parents_.push_back(open.empty() ? -1 : open.back());
      open.push_back(static_cast<int32_t>(table->nodes_.size()));
      table->nodes_.push_back({0, static_cast<int32_t>(table->token_ids_.size()), 0,
                               static_cast<uint8_t>(d + 1), static_cast<uint8_t>(bytes[d])});
      table->max_depth_ = std::max(table->max_depth_, d + 1);
    }
    table->token_ids_.push_back(id);
    ++table->nodes_[open.back()].token_count;
    previous = bytes;
  }
  close_to(0);
  return table;
}

}  // namespace qvl
