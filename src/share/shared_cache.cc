#include "share/shared_cache.h"

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/log.h"
#include "share/model_identity.h"
#include "share/redis_encoding_store.h"

namespace qvl {
namespace {

std::string ReadPassword(const std::string& path) {
  std::ifstream in(path);
  if (!in) Fail(ErrorCode::kIo, "--redis-password-file ", path, ": cannot read it");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

SharedCache::SharedCache(SharedCacheOptions options) : options_(std::move(options)) {
  RedisAddress address = ParseRedisUrl(options_.url);
  if (!options_.password_file.empty()) address.password = ReadPassword(options_.password_file);
  where_ = StrCat(address.host, ":", address.port);
  client_ = std::make_shared<RedisClient>(address, options_.timeout, &counters_.faults);
  writer_ = std::make_unique<BackgroundWriter>(client_, options_.max_pending_bytes,
                                               options_.write_timeout);
}

std::shared_ptr<SharedEncodingStore> SharedCache::AttachModel(const Qwen3VLModel& model) {
  model_key_ = ModelIdentity(model);
  LogInfo("shared cache: redis at ", where_, ", model key ", model_key_, " (", ModelNumerics(model),
          ")");
  ProbeRedis();
  EncodingStoreOptions o;
  o.key_prefix = options_.key_prefix;
  o.model_key = model_key_;
  o.dim = model.config().text.hidden_size;
  o.deepstack_layers = model.config().vision.deepstack_visual_indexes.size();
  o.merge_size = model.config().vision.spatial_merge_size;
  o.local_cache_bytes = options_.local_image_cache_bytes;
  o.max_pending_bytes = options_.max_pending_bytes;
  o.write_timeout = options_.write_timeout;
  return std::make_shared<RedisEncodingStore>(client_, o, &counters_);
}

bool SharedCache::ProbeRedis() {
  // A lookup of a key under the prefix: it connects, authenticates, selects the database
  // and reads a key as requests will. The client logs the first connection, or why it
  // failed (with Redis's own message); either way qvl serves, sharing once Redis answers.
  const bool answered = client_->Fetch(options_.key_prefix + "probe").has_value();
  if (!answered) {
    LogWarn("shared cache: redis at ", where_,
            " did not answer qvl's first lookup (see the line above); serving with local "
            "caches only until it does");
  }
  return answered;
}

std::string SharedCache::Key(std::string_view kind, std::string_view id) const {
  return StrCat(options_.key_prefix, kind, ":", model_key_, ":", id);
}

}  // namespace qvl
