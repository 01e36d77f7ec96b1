// The engine's two hooks for a SharedEncodingStore, on the tiny fixture model: a replica
// offers what it encodes, another uses an encoding the store returns instead of running
// the vision tower, and both give the reference's greedy tokens.
#include "engine/shared_encoding_store.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "engine/engine_test_cases.h"

namespace qvl {
namespace {

// A store in memory, as Redis would be for replicas sharing it.
class MemoryStore : public SharedEncodingStore {
 public:
  std::shared_ptr<const VisionOutput> Find(const ImageKey& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++finds_;
    auto it = values_.find(Key(key));
    return it == values_.end() ? nullptr : it->second;
  }
  void Offer(const ImageKey& key, std::shared_ptr<const VisionOutput> value) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++offers_;
    values_[Key(key)] = std::move(value);
  }
  int offers() {
    std::lock_guard<std::mutex> lock(mu_);
    return offers_;
  }

 private:
  static std::tuple<uint64_t, int64_t, int64_t> Key(const ImageKey& k) {
    return {k.content_hash, k.grid_h, k.grid_w};
  }
  std::mutex mu_;
  std::map<std::tuple<uint64_t, int64_t, int64_t>, std::shared_ptr<const VisionOutput>> values_;
  int finds_ = 0, offers_ = 0;
};

// The fixture's two-image request, greedy, 16 tokens.
GenerationRequest TwoImageRequest() {
  GenerationRequest r = LoadCase("03_two_images");
  r.ignore_eos = true;
  r.top_logprobs = 0;
  return r;
}

struct Result {
  std::vector<int32_t> tokens;
  GenerationUpdate last;
};

Result Ask(Engine& engine) {
  Collector c;
  engine.Submit(TwoImageRequest(), c.Sink());
  c.Wait();
  return {c.tokens, c.last};
}

std::unique_ptr<Engine> Replica(std::shared_ptr<SharedEncodingStore> store) {
  EngineOptions options;
  options.shared_encodings = std::move(store);
  return MakeEngine(options);
}

std::vector<ImageSource> Sources(const Result& r) {
  std::vector<ImageSource> s;
  for (const ImageGrid& g : r.last.timings.images) s.push_back(g.source);
  return s;
}

TEST(SharedEncodings, AnotherReplicaSkipsTheVisionTowerWithTheSameTokens) {
  auto store = std::make_shared<MemoryStore>();
  const Result a = Ask(*Replica(store));
  EXPECT_EQ(a.tokens, GoldenTokens("03_two_images"));
  EXPECT_EQ(Sources(a), std::vector<ImageSource>(2, ImageSource::kEncoder));
  EXPECT_GT(a.last.timings.vision_ms, 0);
  EXPECT_EQ(store->offers(), 2);

  auto b = Replica(store);
  const Result shared = Ask(*b);
  EXPECT_EQ(shared.tokens, GoldenTokens("03_two_images"));
  EXPECT_EQ(Sources(shared), std::vector<ImageSource>(2, ImageSource::kSharedCache));
  EXPECT_EQ(shared.last.timings.vision_ms, 0);
  EXPECT_EQ(b->Stats().images_encoded, 0);
  EXPECT_EQ(store->offers(), 2);  // nothing new to offer

  // Asked again on that replica: its own caches answer.
  const Result local = Ask(*b);
  EXPECT_EQ(local.tokens, GoldenTokens("03_two_images"));
  EXPECT_EQ(Sources(local), std::vector<ImageSource>(2, ImageSource::kLocalCache));
}

}  // namespace
}  // namespace qvl
