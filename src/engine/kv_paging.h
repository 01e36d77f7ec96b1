// The KV pages of the live sequences: each has a block table drawn from one pool; a
// prompt starts from the longest prefix another request left in the prefix cache, and
// the choices of one request share their leader's prompt pages. Engine thread only.
#pragma once

#include <cstdint>

#include "engine/prefix_cache.h"
#include "engine/sequence.h"
#include "model/kv_pool.h"

namespace qvl {

class KvPaging {
 public:
  KvPaging(const TextConfig& config, DType dtype, int page_tokens, size_t budget_bytes);

  KvPool& pool() { return pool_; }
  const KvPool& pool() const { return pool_; }
  const PrefixCache& prefix() const { return prefix_; }
  int64_t page_tokens() const { return pool_.page_size(); }

  // A free page, evicting cached prefixes if needed; -1 when the pool is exhausted.
  int32_t Allocate();
  // Pages for `seq` up to `slots` tokens; false when the pool ran out (pages taken so far
  // stay in the block table).
  bool Ensure(Sequence& seq, int64_t slots);
  // Pages for the whole of `seq.tokens`, the longest cached prefix of whole pages reused
  // (sets seq.cached; at least the last token is left to compute, for its logits; none
  // when it needs the prompt's logits). False, holding nothing, when the pool cannot hold
  // the rest.
  bool Start(Sequence& seq);
  // Gives `seq`'s pages back; with `keep_in_prefix_cache` its full pages stay findable.
  void Release(Sequence& seq, bool keep_in_prefix_cache);
  // `child` continues from `leader`'s KV: its full pages shared, its partial last page
  // copied (shared pages are never written). False, holding nothing, when no page is free
  // for the copy.
  bool Share(const Sequence& leader, Sequence& child);

 private:
  KvPool pool_;
  PrefixCache prefix_;
};

}  // namespace qvl
