#include "server/response_store.h"

#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "share/value_envelope.h"

namespace qvl {
namespace {

constexpr std::string_view kMagic = "QVLR";
// The stored-response format; a change to the payload or to what it means bumps it.
constexpr uint32_t kResponseFormatVersion = 1;
constexpr std::string_view kKind = "resp";

void AppendLength(uint64_t n, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

// One length-prefixed string from the front of `*in`; nullopt when `*in` is too short.
std::optional<std::string> TakeString(std::string_view* in) {
  if (in->size() < 8) return std::nullopt;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>((*in)[i])} << (8 * i);
  in->remove_prefix(8);
  if (n > in->size()) return std::nullopt;
  std::string s(in->substr(0, n));
  in->remove_prefix(n);
  return s;
}

}  // namespace

size_t StoredResponseBytes(const std::string& id, const StoredResponse& value) {
  return id.size() + value.response.size() + value.conversation.size() +
         kStoredResponseOverheadBytes;
}

std::string SealStoredResponse(const std::string& key, const StoredResponse& value) {
  std::string payload;
  payload.reserve(16 + value.response.size() + value.conversation.size());
  AppendLength(value.response.size(), &payload);
  payload += value.response;
  AppendLength(value.conversation.size(), &payload);
  payload += value.conversation;
  return SealValue(kMagic, kResponseFormatVersion, key, payload);
}

std::optional<StoredResponse> OpenStoredResponse(const std::string& key, std::string_view sealed) {
  std::optional<std::string_view> payload = OpenValue(kMagic, kResponseFormatVersion, key, sealed);
  if (!payload) return std::nullopt;
  std::optional<std::string> response = TakeString(&*payload);
  std::optional<std::string> conversation = response ? TakeString(&*payload) : std::nullopt;
  if (!conversation || !payload->empty()) return std::nullopt;
  return StoredResponse{std::move(*response), std::move(*conversation)};
}

struct ResponseStore::State {
  struct Entry {
    std::string id;
    std::shared_ptr<const StoredResponse> value;
    size_t bytes;
  };

  std::mutex mu;
  std::list<Entry> lru;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index;
  size_t bytes = 0;

  // With `mu` held.
  void Erase(std::list<Entry>::iterator it) {
    bytes -= it->bytes;
    index.erase(it->id);
    lru.erase(it);
  }
  bool Erase(const std::string& id) {
    auto it = index.find(id);
    if (it == index.end()) return false;
    Erase(it->second);
    return true;
  }
  void Keep(const std::string& id, std::shared_ptr<const StoredResponse> value, size_t value_bytes,
            size_t max_bytes) {
    Erase(id);
    if (value_bytes > max_bytes) return;
    lru.push_front({id, std::move(value), value_bytes});
    index.emplace(id, lru.begin());
    bytes += value_bytes;
    while (bytes > max_bytes) Erase(std::prev(lru.end()));
  }
};

ResponseStore::ResponseStore(ResponseStoreOptions options, SharedCache* shared)
    : options_(options), shared_(shared), state_(std::make_unique<State>()) {}

ResponseStore::~ResponseStore() = default;

void ResponseStore::Put(const std::string& id, StoredResponse value) {
  auto kept = std::make_shared<const StoredResponse>(std::move(value));
  const size_t bytes = StoredResponseBytes(id, *kept);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->Keep(id, kept, bytes, options_.max_bytes);
  }
  if (shared_ == nullptr) return;
  const std::string key = shared_->Key(kKind, id);
  const bool written =
      shared_->client().Set(key, SealStoredResponse(key, *kept), options_.shared_ttl_seconds,
                            shared_->options().write_timeout);
  ++(written ? shared_->counters().response_stores : shared_->counters().response_dropped);
}

std::optional<StoredResponse> ResponseStore::Get(const std::string& id) {
  if (shared_ != nullptr) {
    const std::string key = shared_->Key(kKind, id);
    SharedCacheCounters& counters = shared_->counters();
    const std::optional<std::optional<std::string>> fetched = shared_->client().Fetch(key);
    if (fetched && !*fetched) {
      // Redis answered: deleted on another replica, or expired.
      ++counters.response_misses;
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->Erase(id);
      return std::nullopt;
    }
    if (fetched) {
      if (std::optional<StoredResponse> value = OpenStoredResponse(key, **fetched)) {
        ++counters.response_hits;
        auto kept = std::make_shared<const StoredResponse>(*value);
        const size_t bytes = StoredResponseBytes(id, *kept);
        std::lock_guard<std::mutex> lock(state_->mu);
        state_->Keep(id, std::move(kept), bytes, options_.max_bytes);
        return value;
      }
      ++counters.response_rejected;
    } else {
      ++counters.response_misses;
    }
    // Redis is unreachable or holds a value that does not open: this replica's copy.
  }
  std::shared_ptr<const StoredResponse> local;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (auto it = state_->index.find(id); it != state_->index.end()) {
      state_->lru.splice(state_->lru.begin(), state_->lru, it->second);
      local = it->second->value;
    }
  }
  if (!local) return std::nullopt;
  return *local;
}

bool ResponseStore::Delete(const std::string& id) {
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    found = state_->Erase(id);
  }
  if (shared_ == nullptr) return found;
  const std::optional<bool> removed = shared_->client().Del(shared_->Key(kKind, id));
  return found || removed.value_or(false);
}

size_t ResponseStore::local_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->bytes;
}

size_t ResponseStore::local_entries() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->lru.size();
}

}  // namespace qvl
