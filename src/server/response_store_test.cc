#include "server/response_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "share/redis_test_server.h"
#include "share/value_envelope.h"

namespace qvl {
namespace {

using std::chrono::milliseconds;

// Each id always gets the same value, so a concurrent reader can check what it got.
StoredResponse ValueFor(const std::string& id, size_t padding = 0) {
  return {"{\"id\":\"" + id + "\",\"object\":\"response\"}" + std::string(padding, ' '),
          "[{\"role\":\"user\",\"content\":\"" + id + "\"}]"};
}

void ExpectSame(const std::optional<StoredResponse>& got, const StoredResponse& want) {
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->response, want.response);
  EXPECT_EQ(got->conversation, want.conversation);
}

ResponseStoreOptions LocalBytes(size_t max_bytes) {
  ResponseStoreOptions o;
  o.max_bytes = max_bytes;
  return o;
}

// Four threads Put, Get and Delete `ids` ids for `rounds` rounds, on the stores in
// turn; returns how many values read were not the one put under their id.
int Hammer(const std::vector<ResponseStore*>& stores, int ids, int rounds) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ResponseStore& store = *stores[t % stores.size()];
      for (int i = 0; i < rounds; ++i) {
        const std::string id = "resp_" + std::to_string((i * 7 + t * 13) % ids);
        const StoredResponse want = ValueFor(id, 100);
        switch ((i + t) % 5) {
          case 0:
          case 1:
            store.Put(id, want);
            break;
          case 4:
            store.Delete(id);
            break;
          default:
            if (std::optional<StoredResponse> got = store.Get(id);
                got && (got->response != want.response || got->conversation != want.conversation))
              ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return wrong.load();
}

TEST(ResponseStore, PutThenGetReturnsBothStrings) {
  ResponseStore store({}, nullptr);
  EXPECT_TRUE(store.enabled());
  store.Put("resp_1", ValueFor("resp_1"));
  ExpectSame(store.Get("resp_1"), ValueFor("resp_1"));
  EXPECT_FALSE(store.Get("resp_2").has_value());
  EXPECT_EQ(store.local_entries(), 1u);
  EXPECT_EQ(store.local_bytes(), StoredResponseBytes("resp_1", ValueFor("resp_1")));
}

TEST(ResponseStore, PutAgainReplacesTheValue) {
  ResponseStore store({}, nullptr);
  store.Put("resp_1", ValueFor("resp_1"));
  store.Put("resp_1", ValueFor("resp_1", 10));
  ExpectSame(store.Get("resp_1"), ValueFor("resp_1", 10));
  EXPECT_EQ(store.local_entries(), 1u);
  EXPECT_EQ(store.local_bytes(), StoredResponseBytes("resp_1", ValueFor("resp_1", 10)));
}

TEST(ResponseStore, EvictsTheLeastRecentlyUsedBeyondMaxBytes) {
  const size_t one = StoredResponseBytes("resp_a", ValueFor("resp_a"));
  ResponseStore store(LocalBytes(3 * one), nullptr);
  for (const char* id : {"resp_a", "resp_b", "resp_c"}) store.Put(id, ValueFor(id));
  ASSERT_EQ(store.local_entries(), 3u);
  ASSERT_TRUE(store.Get("resp_a").has_value());  // now b is the oldest
  store.Put("resp_d", ValueFor("resp_d"));
  EXPECT_FALSE(store.Get("resp_b").has_value());
  for (const char* id : {"resp_a", "resp_c", "resp_d"}) ExpectSame(store.Get(id), ValueFor(id));
  EXPECT_EQ(store.local_bytes(), 3 * one);
  // One twice as large pushes out the two oldest: a, c, d were read in that order.
  store.Put("resp_e", ValueFor("resp_e", one));
  EXPECT_FALSE(store.Get("resp_a").has_value());
  EXPECT_FALSE(store.Get("resp_c").has_value());
  ExpectSame(store.Get("resp_d"), ValueFor("resp_d"));
  ExpectSame(store.Get("resp_e"), ValueFor("resp_e", one));
  EXPECT_LE(store.local_bytes(), 3 * one);
}

TEST(ResponseStore, ValueLargerThanMaxBytesIsNotKeptLocally) {
  const size_t small = StoredResponseBytes("resp_s", ValueFor("resp_s"));
  ResponseStore store(LocalBytes(2 * small), nullptr);
  store.Put("resp_s", ValueFor("resp_s"));
  store.Put("resp_big", ValueFor("resp_big", 2 * small));
  EXPECT_FALSE(store.Get("resp_big").has_value());
  ExpectSame(store.Get("resp_s"), ValueFor("resp_s"));  // not evicted for it
  // A too-large value under a kept id replaces it: the old one is not served.
  store.Put("resp_s", ValueFor("resp_s", 2 * small));
  EXPECT_FALSE(store.Get("resp_s").has_value());
  EXPECT_EQ(store.local_entries(), 0u);
  EXPECT_EQ(store.local_bytes(), 0u);
}

TEST(ResponseStore, DeleteRemovesIt) {
  ResponseStore store({}, nullptr);
  store.Put("resp_1", ValueFor("resp_1"));
  store.Put("resp_2", ValueFor("resp_2"));
  EXPECT_TRUE(store.Delete("resp_1"));
  EXPECT_FALSE(store.Get("resp_1").has_value());
  EXPECT_FALSE(store.Delete("resp_1"));
  EXPECT_FALSE(store.Delete("resp_never"));
  ExpectSame(store.Get("resp_2"), ValueFor("resp_2"));
  EXPECT_EQ(store.local_bytes(), StoredResponseBytes("resp_2", ValueFor("resp_2")));
}

TEST(ResponseStore, ZeroBytesKeepsNothing) {
  ResponseStore store(LocalBytes(0), nullptr);
  EXPECT_FALSE(store.enabled());
  store.Put("resp_1", ValueFor("resp_1"));
  EXPECT_FALSE(store.Get("resp_1").has_value());
  EXPECT_FALSE(store.Delete("resp_1"));
  EXPECT_EQ(store.local_entries(), 0u);
}

TEST(ResponseStore, ConcurrentPutGetDeleteStayWithinMaxBytes) {
  const size_t max_bytes = 20 * StoredResponseBytes("resp_00", ValueFor("resp_00", 100));
  ResponseStore store(LocalBytes(max_bytes), nullptr);
  EXPECT_EQ(Hammer({&store}, 50, 3000), 0);
  EXPECT_LE(store.local_bytes(), max_bytes);
  EXPECT_LE(store.local_entries(), 20u);
  EXPECT_GT(store.local_entries(), 0u);
}

TEST(StoredResponseValue, SealsAndOpensExactlyUnderItsKey) {
  const StoredResponse value{std::string("{\"a\":\"\0\"}", 9), ""};
  const std::string sealed = SealStoredResponse("qvl:resp:m:resp_1", value);
  ExpectSame(OpenStoredResponse("qvl:resp:m:resp_1", sealed), value);
  EXPECT_FALSE(OpenStoredResponse("qvl:resp:m:resp_2", sealed).has_value());
  EXPECT_FALSE(
      OpenStoredResponse("qvl:resp:m:resp_1", sealed.substr(0, sealed.size() - 1)).has_value());
  std::string flipped = sealed;
  flipped[flipped.size() - 3] ^= 1;
  EXPECT_FALSE(OpenStoredResponse("qvl:resp:m:resp_1", flipped).has_value());
  // Another kind of value (an answer's magic) under the same key.
  EXPECT_FALSE(
      OpenStoredResponse("qvl:resp:m:resp_1", SealValue("QVLA", 1, "qvl:resp:m:resp_1", "payload"))
          .has_value());
  // A payload whose lengths do not add up.
  EXPECT_FALSE(
      OpenStoredResponse("qvl:resp:m:resp_1", SealValue("QVLR", 1, "qvl:resp:m:resp_1", "\x05"))
          .has_value());
}

class ResponseStoreShared : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisTestServer::Available()) GTEST_SKIP() << "redis-server is not installed";
    server_ = std::make_unique<RedisTestServer>();
    replica_a_ = MakeCache();
    replica_b_ = MakeCache();
  }

  std::unique_ptr<SharedCache> MakeCache() const {
    SharedCacheOptions o;
    o.url = server_->url();
    o.timeout = milliseconds(1000);
    return std::make_unique<SharedCache>(o);
  }

  std::string Exists(const std::string& id) const {
    return server_->Cli("EXISTS " + replica_a_->Key("resp", id));
  }

  std::unique_ptr<RedisTestServer> server_;
  std::unique_ptr<SharedCache> replica_a_, replica_b_;
};

TEST_F(ResponseStoreShared, AnotherReplicaFindsItInRedis) {
  ResponseStoreOptions options;
  options.shared_ttl_seconds = 600;
  ResponseStore a(options, replica_a_.get());
  ResponseStore b(options, replica_b_.get());
  a.Put("resp_1", ValueFor("resp_1"));
  EXPECT_EQ(replica_a_->counters().response_stores.load(), 1);
  ExpectSame(b.Get("resp_1"), ValueFor("resp_1"));
  EXPECT_EQ(replica_b_->counters().response_hits.load(), 1);
  EXPECT_EQ(b.local_entries(), 1u);  // kept, for when Redis cannot be reached
  ExpectSame(b.Get("resp_1"), ValueFor("resp_1"));
  EXPECT_EQ(replica_b_->counters().response_hits.load(), 2);
  EXPECT_FALSE(b.Get("resp_absent").has_value());
  EXPECT_EQ(replica_b_->counters().response_misses.load(), 1);
  const int ttl = std::stoi(server_->Cli("TTL " + replica_a_->Key("resp", "resp_1")));
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 600);
}

TEST_F(ResponseStoreShared, ZeroLocalBytesStillSharesThroughRedis) {
  ResponseStore a(LocalBytes(0), replica_a_.get());
  EXPECT_TRUE(a.enabled());
  a.Put("resp_1", ValueFor("resp_1"));
  ExpectSame(a.Get("resp_1"), ValueFor("resp_1"));
  EXPECT_EQ(a.local_entries(), 0u);
  EXPECT_TRUE(a.Delete("resp_1"));  // found in Redis only
  EXPECT_FALSE(a.Get("resp_1").has_value());
}

TEST_F(ResponseStoreShared, DeleteRemovesItFromRedis) {
  ResponseStore a({}, replica_a_.get());
  ResponseStore b({}, replica_b_.get());
  a.Put("resp_1", ValueFor("resp_1"));
  ASSERT_EQ(Exists("resp_1"), "1\n");
  EXPECT_TRUE(a.Delete("resp_1"));
  EXPECT_EQ(Exists("resp_1"), "0\n");
  EXPECT_FALSE(a.Get("resp_1").has_value());
  EXPECT_FALSE(b.Get("resp_1").has_value());
  EXPECT_FALSE(b.Delete("resp_1"));
}

TEST_F(ResponseStoreShared, ADeleteOnOneReplicaIsSeenByTheOthers) {
  ResponseStore a({}, replica_a_.get());
  ResponseStore b({}, replica_b_.get());
  a.Put("resp_1", ValueFor("resp_1"));
  // Written before Put returns: the other replica finds it at once.
  ExpectSame(b.Get("resp_1"), ValueFor("resp_1"));
  EXPECT_EQ(b.local_entries(), 1u);
  EXPECT_TRUE(a.Delete("resp_1"));
  // b's memory copy is not served: Redis says it is gone, and b forgets it too.
  EXPECT_FALSE(b.Get("resp_1").has_value());
  EXPECT_EQ(b.local_entries(), 0u);
}

TEST_F(ResponseStoreShared, ForeignOrCorruptValuesAreNotFoundAndCounted) {
  ResponseStore b({}, replica_b_.get());
  RedisClient& client = replica_a_->client();
  const std::string key1 = replica_a_->Key("resp", "resp_1");
  const std::string key2 = replica_a_->Key("resp", "resp_2");
  const std::string key3 = replica_a_->Key("resp", "resp_3");
  ASSERT_TRUE(client.Set(key1, "not a sealed value", 0, milliseconds(1000)));
  // A good value of resp_2 copied under resp_3.
  ASSERT_TRUE(
      client.Set(key2, SealStoredResponse(key2, ValueFor("resp_2")), 0, milliseconds(1000)));
  ASSERT_TRUE(
      client.Set(key3, SealStoredResponse(key2, ValueFor("resp_2")), 0, milliseconds(1000)));
  EXPECT_FALSE(b.Get("resp_1").has_value());
  EXPECT_FALSE(b.Get("resp_3").has_value());
  EXPECT_EQ(replica_b_->counters().response_rejected.load(), 2);
  EXPECT_EQ(b.local_entries(), 0u);
  ExpectSame(b.Get("resp_2"), ValueFor("resp_2"));
  EXPECT_EQ(replica_b_->counters().response_hits.load(), 1);
}

TEST_F(ResponseStoreShared, RedisDownServesWhatThisReplicaHolds) {
  ResponseStore a({}, replica_a_.get());
  a.Put("resp_kept", ValueFor("resp_kept"));
  server_->Kill();
  const RedisFaultCounters& faults = replica_a_->counters().faults;
  EXPECT_FALSE(a.Get("resp_elsewhere").has_value());
  EXPECT_EQ(faults.Get(RedisFault::kUnreachable), 1);
  EXPECT_EQ(replica_a_->counters().response_misses.load(), 1);
  // Memory still serves what this replica made; a Put is kept locally, its write dropped.
  ExpectSame(a.Get("resp_kept"), ValueFor("resp_kept"));
  a.Put("resp_new", ValueFor("resp_new"));
  EXPECT_EQ(replica_a_->counters().response_dropped.load(), 1);
  ExpectSame(a.Get("resp_new"), ValueFor("resp_new"));
  EXPECT_TRUE(a.Delete("resp_new"));
  EXPECT_FALSE(a.Delete("resp_new"));
}

TEST_F(ResponseStoreShared, ConcurrentReplicasStayConsistent) {
  const size_t max_bytes = 10 * StoredResponseBytes("resp_00", ValueFor("resp_00", 100));
  ResponseStore a(LocalBytes(max_bytes), replica_a_.get());
  ResponseStore b(LocalBytes(max_bytes), replica_b_.get());
  EXPECT_EQ(Hammer({&a, &b}, 30, 300), 0);
  EXPECT_LE(a.local_bytes(), max_bytes);
  EXPECT_LE(b.local_bytes(), max_bytes);
  EXPECT_EQ(replica_a_->counters().response_rejected.load() +
                replica_b_->counters().response_rejected.load(),
            0);
}

}  // namespace
}  // namespace qvl
