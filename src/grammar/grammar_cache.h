// Compiled grammars by the text they were compiled from, least recently used first out,
// so that a schema sent again (a client's every request) reuses its grammar, and with
// it the automaton and the masks that earlier matchers built (up to about 100 MB per
// grammar in the worst case, usually a few MB: size the capacity with that). Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "grammar/grammar.h"

namespace qvl {

class GrammarCache {
 public:
  explicit GrammarCache(size_t capacity) : capacity_(capacity) {}

  // The grammar cached under `key`, else compile() (outside the lock; an exception
  // propagates and nothing is cached). Key by everything the grammar depends on, e.g.
  // "schema:" + schema.dump().
  std::shared_ptr<const Grammar> Get(
      const std::string& key, const std::function<std::shared_ptr<const Grammar>()>& compile);

  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Grammar>>;

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace qvl
