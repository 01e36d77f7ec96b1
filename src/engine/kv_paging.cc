#include "engine/kv_paging.h"

#include <algorithm>

namespace qvl {

KvPaging::KvPaging(const TextConfig& config, DType dtype, int page_tokens, size_t budget_bytes)
    : pool_(config, dtype, page_tokens, budget_bytes), prefix_(pool_) {}

int32_t KvPaging::Allocate() {
  int32_t page = pool_.Allocate();
  if (page < 0 && prefix_.EvictUntilFree(1)) page = pool_.Allocate();
  return page;
}

bool KvPaging::Ensure(Sequence& seq, int64_t slots) {
  while (static_cast<int64_t>(seq.pages.size()) * pool_.page_size() < slots) {
    const int32_t page = Allocate();
    if (page < 0) return false;
    seq.pages.push_back(page);
  }
  return true;
}

bool KvPaging::Start(Sequence& seq) {
  const int64_t n = static_cast<int64_t>(seq.tokens.size());
  const int64_t page = pool_.page_size();
  // A prompt whose logprobs are asked for needs the logits of every position: it reuses no
  // KV (its own pages still go to the cache for others).
  seq.pages = prefix_.Match(seq.keys, seq.NeedsPromptLogits() ? 0 : (n - 1) / page);
  seq.cached = static_cast<int64_t>(seq.pages.size()) * page;
  const int64_t needed = (n + page - 1) / page - static_cast<int64_t>(seq.pages.size());
  if (pool_.free_pages() < needed && !prefix_.EvictUntilFree(needed)) {
    Release(seq, false);
    return false;
  }
  return Ensure(seq, n);
}

void KvPaging::Release(Sequence& seq, bool keep_in_prefix_cache) {
  if (keep_in_prefix_cache) {
    const int64_t full = seq.cached / pool_.page_size();
    prefix_.Insert(
        std::span<const uint64_t>(seq.keys).first(std::min<size_t>(seq.keys.size(), seq.cached)),
        std::span<const int32_t>(seq.pages).first(full));
  }
  for (int32_t p : seq.pages) pool_.Release(p);
  seq.pages.clear();
}

bool KvPaging::Share(const Sequence& leader, Sequence& child) {
  const int64_t full = leader.cached / pool_.page_size();
  const int64_t partial = leader.cached % pool_.page_size();
  const int32_t copy = partial > 0 ? Allocate() : 0;
  if (copy < 0) return false;
  for (int64_t p = 0; p < full; ++p) {
    pool_.AddRef(leader.pages[p]);
    child.pages.push_back(leader.pages[p]);
  }
  if (partial > 0) {
    pool_.CopyPage(leader.pages[full], copy, static_cast<int>(partial));
    child.pages.push_back(copy);
  }
  child.cached = leader.cached;
  return true;
}

}  // namespace qvl
