#include "share/redis_encoding_store.h"

#include <gtest/gtest.h>

#include "share/redis_test_server.h"

namespace qvl {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kDim = 8;
constexpr size_t kLayers = 3;

std::shared_ptr<const VisionOutput> Output(int64_t tokens, float base) {
  auto v = std::make_shared<VisionOutput>();
  v->tokens = tokens;
  for (int64_t i = 0; i < tokens * kDim; ++i) v->embeds.push_back(base + static_cast<float>(i));
  for (size_t l = 0; l < kLayers; ++l) {
    v->deepstack.emplace_back();
    for (int64_t i = 0; i < tokens * kDim; ++i) v->deepstack.back().push_back(base - l - i);
  }
  return v;
}

class EncodingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisTestServer::Available()) GTEST_SKIP() << "redis-server is not installed";
    server_ = std::make_unique<RedisTestServer>();
  }
  // A store as one replica has it: its own client and local key list.
  std::unique_ptr<RedisEncodingStore> Replica(const std::string& model_key = "m1") {
    auto client = std::make_shared<RedisClient>(ParseRedisUrl(server_->url()), milliseconds(1000),
                                                &counters_.faults);
    EncodingStoreOptions o;
    o.key_prefix = "t:";
    o.model_key = model_key;
    o.dim = kDim;
    o.deepstack_layers = kLayers;
    return std::make_unique<RedisEncodingStore>(client, o, &counters_);
  }
  std::unique_ptr<RedisTestServer> server_;
  SharedCacheCounters counters_;
};

// 4 x 6 patches, merge 2: 6 tokens.
const ImageKey kImage{0xabcdef, 4, 6};

TEST_F(EncodingStoreTest, AnotherReplicaGetsTheSameFloats) {
  auto a = Replica();
  auto b = Replica();
  EXPECT_EQ(b->Find(kImage), nullptr);
  EXPECT_EQ(counters_.image_misses.load(), 1);
  const auto encoded = Output(6, 0.5f);
  a->Offer(kImage, encoded);
  a->Flush();
  EXPECT_EQ(counters_.image_stores.load(), 1);
  const auto got = b->Find(kImage);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->tokens, 6);
  EXPECT_EQ(got->embeds, encoded->embeds);
  EXPECT_EQ(got->deepstack, encoded->deepstack);
  EXPECT_EQ(counters_.image_hits.load(), 1);
  // What a replica stored or fetched is in its own cache: no second round trip.
  EXPECT_EQ(a->Find(kImage), nullptr);
  EXPECT_EQ(b->Find(kImage), nullptr);
  EXPECT_EQ(counters_.image_hits.load(), 1);
  EXPECT_EQ(counters_.image_misses.load(), 1);
}

TEST_F(EncodingStoreTest, OtherModelsOrGridsDoNotShare) {
  auto a = Replica("m1");
  a->Offer(kImage, Output(6, 1));
  a->Flush();
  EXPECT_EQ(Replica("m2")->Find(kImage), nullptr);
  EXPECT_EQ(Replica("m1")->Find({kImage.content_hash, 6, 4}), nullptr);
  EXPECT_NE(Replica("m1")->Find(kImage), nullptr);
}

TEST_F(EncodingStoreTest, CorruptedValueIsDetectedAndIgnored) {
  auto a = Replica();
  a->Offer(kImage, Output(6, 1));
  a->Flush();
  const std::string key = a->RedisKey(kImage);
  // Overwrite one byte in the middle of the floats by hand.
  server_->Cli("SETRANGE " + key + " 200 X");
  EXPECT_EQ(Replica()->Find(kImage), nullptr);
  EXPECT_EQ(counters_.image_rejected.load(), 1);
  server_->Cli("SET " + key + " garbage");
  EXPECT_EQ(Replica()->Find(kImage), nullptr);
  EXPECT_EQ(counters_.image_rejected.load(), 2);
}

TEST_F(EncodingStoreTest, EncodingsOverTheValueLimitAreNotShared) {
  auto client = std::make_shared<RedisClient>(ParseRedisUrl(server_->url()), milliseconds(1000),
                                              &counters_.faults);
  EncodingStoreOptions o;
  o.model_key = "m1";
  o.dim = kDim;
  o.deepstack_layers = kLayers;
  o.max_value_bytes = 6 * kDim * (1 + kLayers) * sizeof(float) - 1;
  RedisEncodingStore small(client, o, &counters_);
  small.Offer(kImage, Output(6, 1));
  small.Flush();
  EXPECT_EQ(counters_.image_dropped.load(), 1);
  EXPECT_EQ(counters_.image_stores.load(), 0);
  EXPECT_EQ(server_->Cli("DBSIZE").substr(0, 1), "0");
  EXPECT_EQ(Replica()->Find(kImage), nullptr);
}

TEST_F(EncodingStoreTest, WrongShapeIsRejected) {
  auto a = Replica();
  a->Offer(kImage, Output(4, 1));  // 4 tokens where the grid means 6
  a->Flush();
  EXPECT_EQ(Replica()->Find(kImage), nullptr);
  EXPECT_EQ(counters_.image_rejected.load(), 1);
}

TEST_F(EncodingStoreTest, RedisDownMeansMissesAndDroppedWritesThenSharingResumes) {
  auto a = Replica();
  server_->Kill();
  a->Offer(kImage, Output(6, 1));
  a->Flush();
  EXPECT_EQ(counters_.image_dropped.load(), 1);
  EXPECT_EQ(Replica()->Find(kImage), nullptr);
  EXPECT_GE(counters_.faults.Get(RedisFault::kUnreachable), 2);
  server_->Start();
  // The dropped write is forgotten, so the next encoding offers it again.
  std::shared_ptr<const VisionOutput> got;
  for (int i = 0; i < 50 && got == nullptr; ++i) {
    a->Offer(kImage, Output(6, 1));
    a->Flush();
    got = Replica()->Find(kImage);
    if (got == nullptr) usleep(100 * 1000);
  }
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->embeds, Output(6, 1)->embeds);
}

}  // namespace
}  // namespace qvl
