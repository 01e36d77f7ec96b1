#include "grammar/grammar_cache.h"

namespace qvl {

std::shared_ptr<const Grammar> GrammarCache::Get(
    const std::string& key, const std::function<std::shared_ptr<const Grammar>()>& compile) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = index_.find(key);
    if (it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
  }
  std::shared_ptr<const Grammar> grammar = compile();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;  // compiled meanwhile by another thread
  if (capacity_ == 0) return grammar;
  entries_.emplace_front(key, grammar);
  index_[key] = entries_.begin();
  while (entries_.size() > capacity_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return grammar;
}

size_t GrammarCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace qvl
