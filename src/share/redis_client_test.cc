#include "share/redis_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/captured_log.h"
#include "base/error.h"
#include "base/log.h"
#include "share/redis_test_server.h"
#include "share/shared_cache.h"

namespace qvl {
namespace {

using std::chrono::milliseconds;

RedisAddress Loopback(int port) {
  RedisAddress a;
  a.port = port;
  return a;
}

TEST(ParseRedisUrl, ReadsEveryPart) {
  RedisAddress a = ParseRedisUrl("redis://cache.internal");
  EXPECT_EQ(a.host, "cache.internal");
  EXPECT_EQ(a.port, 6379);
  EXPECT_EQ(a.password, "");
  a = ParseRedisUrl("redis://:s3cret@10.0.0.5:6380/2");
  EXPECT_EQ(a.host, "10.0.0.5");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.password, "s3cret");
  EXPECT_EQ(a.db, 2);
  a = ParseRedisUrl("redis://qvl:pw@redis/");
  EXPECT_EQ(a.user, "qvl");
  EXPECT_EQ(a.password, "pw");
  EXPECT_EQ(a.host, "redis");
}

// User and password are percent-encoded in a URL (RFC 3986), as redis-cli and redis-py
// read them: a password with '@', ':' or '/' must be written so.
TEST(ParseRedisUrl, DecodesPercentEncodedUserAndPassword) {
  RedisAddress a = ParseRedisUrl("redis://:p%40ss%3A%2F1@host:6380");
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.password, "p@ss:/1");
  EXPECT_EQ(a.host, "host");
  EXPECT_EQ(a.port, 6380);
  a = ParseRedisUrl("redis://qvl%2Dapp:%25x%2a@h");
  EXPECT_EQ(a.user, "qvl-app");
  EXPECT_EQ(a.password, "%x*");
  a = ParseRedisUrl("redis://p%40ss@h");  // the password alone
  EXPECT_EQ(a.password, "p@ss");
}

TEST(ParseRedisUrl, InvalidEscapesNameRedisAndNotThePassword) {
  for (const std::string url :
       {"redis://:50%off@h", "redis://:pw%4@h", "redis://:pw%@h", "redis://us%zzer:pw@h"}) {
    SCOPED_TRACE(url);
    try {
      ParseRedisUrl(url);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      const std::string message = e.what();
      EXPECT_NE(message.find("--redis"), std::string::npos) << message;
      EXPECT_NE(message.find("two hex digits"), std::string::npos) << message;
      EXPECT_EQ(message.find(url), std::string::npos) << "the password stays out: " << message;
    }
  }
}

TEST(ParseRedisUrl, RefusesWhatItCannotUse) {
  auto message = [](const std::string& url) {
    try {
      ParseRedisUrl(url);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("rediss://h:1").find("TLS"), std::string::npos);
  EXPECT_NE(message("http://h:1").find("expected redis://"), std::string::npos);
  EXPECT_NE(message("redis://h:port").find("port"), std::string::npos);
  EXPECT_NE(message("redis://:1").find("no host"), std::string::npos);
  // Errors reach logs: a password in the URL is shown as ***.
  EXPECT_EQ(message("redis://qvl:s3cret@h:port"),
            "--redis redis://qvl:***@h:port: the port 'port' is not a number");
  EXPECT_EQ(message("redis://s3cret@h/db"),
            "--redis redis://***@h/db: the database 'db' is not a number");
  EXPECT_EQ(message("rediss://:s3cret@h").find("s3cret"), std::string::npos);
  EXPECT_EQ(message("redis://:s3cret@").find("s3cret"), std::string::npos);
}

TEST(RedisClient, DownServerIsAFaultNotAnError) {
  RedisFaultCounters faults;
  RedisClient client(Loopback(FreeLoopbackPort()), milliseconds(200), &faults);
  EXPECT_FALSE(client.Get("k"));
  EXPECT_FALSE(client.Set("k", "v", 0, milliseconds(200)));
  EXPECT_EQ(faults.Get(RedisFault::kUnreachable), 2);
}

TEST(RedisClient, ADownServerIsLoggedWithTheReason) {
  CapturedLog log;
  RedisFaultCounters faults;
  const int port = FreeLoopbackPort();
  RedisClient client(Loopback(port), milliseconds(200), &faults);
  EXPECT_FALSE(client.Get("k"));
  EXPECT_EQ(log.Count({StrCat("redis 127.0.0.1:", port, ": unreachable to connect: "), "refused",
                       "caching locally only"}),
            1u)
      << log.Joined();
}

TEST(RedisClient, StallingServerTimesOut) {
  CapturedLog log;
  FakeRedisServer fake(FakeRedisServer::Mode::kStall);
  RedisFaultCounters faults;
  RedisClient client(Loopback(fake.port()), milliseconds(100), &faults);
  EXPECT_FALSE(client.Get("k"));
  EXPECT_EQ(faults.Get(RedisFault::kTimeout), 1);
  // A Redis that accepts and never answers says so in the log, not only in /metrics.
  EXPECT_EQ(log.Count({"timeout to GET: no reply within 100 ms", "skipping Redis for 1000 ms"}), 1u)
      << log.Joined();
}

TEST(RedisClient, GarbageAnswerIsRefused) {
  FakeRedisServer fake(FakeRedisServer::Mode::kGarbage);
  RedisFaultCounters faults;
  RedisClient client(Loopback(fake.port()), milliseconds(1000), &faults);
  EXPECT_FALSE(client.Get("k"));
  EXPECT_EQ(faults.Get(RedisFault::kGarbage), 1);
}

// Replies as a server would send them, and ones that break the protocol.
TEST(RedisClient, ReadsRepliesAndRefusesMalformedOnes) {
  struct Case {
    std::string reply;
    std::optional<std::string> value;
    RedisFault fault;  // kCount: none
  };
  const std::vector<Case> cases = {
      {"$5\r\nhello\r\n", "hello", RedisFault::kCount},
      {"$0\r\n\r\n", "", RedisFault::kCount},
      {"$-1\r\n", std::nullopt, RedisFault::kCount},
      {"-ERR wrong\r\n", std::nullopt, RedisFault::kErrorReply},
      {"$5\r\nhelloXY", std::nullopt, RedisFault::kGarbage},         // bad trailer
      {"$3\r\nhello\r\n", std::nullopt, RedisFault::kGarbage},       // longer than said
      {"$x\r\n", std::nullopt, RedisFault::kGarbage},                // no length
      {":12\r\n", std::nullopt, RedisFault::kGarbage},               // not a string
      {"$9\r\nhello", std::nullopt, RedisFault::kTimeout},           // the rest never comes
      {std::string(5000, 'a'), std::nullopt, RedisFault::kGarbage},  // no line end
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reply.substr(0, 20));
    FakeRedisServer fake(c.reply);
    RedisFaultCounters faults;
    RedisClient client(Loopback(fake.port()), milliseconds(300), &faults);
    EXPECT_EQ(client.Get("k"), c.value);
    for (int k = 0; k < static_cast<int>(RedisFault::kCount); ++k) {
      const RedisFault f = static_cast<RedisFault>(k);
      EXPECT_EQ(faults.Get(f), f == c.fault ? 1 : 0) << RedisFaultName(f);
    }
  }
}

std::string PortUrl(const RedisTestServer& server, const std::string& credentials,
                    const std::string& db = "") {
  return StrCat("redis://", credentials, "127.0.0.1:", server.port(), db);
}

class RedisClientLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisTestServer::Available()) GTEST_SKIP() << "redis-server is not installed";
    server_ = std::make_unique<RedisTestServer>();
  }
  std::unique_ptr<RedisTestServer> server_;
};

TEST_F(RedisClientLive, SetsAndGetsBinaryValues) {
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(1000), &faults);
  const std::string value("a\0b\r\nc", 6);
  ASSERT_TRUE(client.Set("qvl-test:bin", value, 0, milliseconds(1000)));
  EXPECT_EQ(client.Get("qvl-test:bin").value_or(""), value);
  EXPECT_FALSE(client.Get("qvl-test:absent"));
  EXPECT_EQ(faults.Get(RedisFault::kUnreachable) + faults.Get(RedisFault::kTimeout), 0);
}

TEST_F(RedisClientLive, DelSaysWhetherAKeyWasRemoved) {
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(1000), &faults);
  ASSERT_TRUE(client.Set("qvl-test:del", "v", 0, milliseconds(1000)));
  EXPECT_EQ(client.Del("qvl-test:del"), std::optional<bool>(true));
  EXPECT_FALSE(client.Get("qvl-test:del"));
  EXPECT_EQ(client.Del("qvl-test:del"), std::optional<bool>(false));
  server_->Kill();
  EXPECT_EQ(client.Del("qvl-test:del"), std::nullopt);
  EXPECT_EQ(faults.Get(RedisFault::kUnreachable), 1);
}

TEST_F(RedisClientLive, WrongPasswordIsAFault) {
  server_->Cli("CONFIG SET requirepass pw");
  RedisFaultCounters faults;
  RedisClient wrong(ParseRedisUrl("redis://:nope@127.0.0.1:" + std::to_string(server_->port())),
                    milliseconds(1000), &faults);
  EXPECT_FALSE(wrong.Get("k"));
  EXPECT_EQ(faults.Get(RedisFault::kErrorReply), 1);
  RedisClient right(ParseRedisUrl("redis://:pw@127.0.0.1:" + std::to_string(server_->port())),
                    milliseconds(1000), &faults);
  EXPECT_TRUE(right.Set("k", "v", 0, milliseconds(1000)));
  EXPECT_EQ(right.Get("k").value_or(""), "v");
}

TEST_F(RedisClientLive, APercentEncodedPasswordAuthenticates) {
  server_->Cli("CONFIG SET requirepass 'p@ss:/1'");
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(PortUrl(*server_, ":p%40ss%3A%2F1@")), milliseconds(1000),
                     &faults);
  EXPECT_TRUE(client.Set("k", "v", 0, milliseconds(1000)));
  EXPECT_EQ(faults.Get(RedisFault::kErrorReply), 0);
}

TEST_F(RedisClientLive, TheFirstConnectionIsLogged) {
  CapturedLog log;
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(1000), &faults);
  EXPECT_FALSE(client.Get("k"));
  EXPECT_FALSE(client.Get("k"));
  EXPECT_EQ(log.Count({StrCat("redis 127.0.0.1:", server_->port(), ": connected, database 0")}), 1u)
      << log.Joined();
}

// Misconfigurations Redis answers with an error reply: each logged once with Redis's own
// message and what qvl does, then no more within the minute (still counted).
TEST_F(RedisClientLive, MisconfigurationsAreLoggedWithRedisOwnMessage) {
  server_->Cli("ACL SETUSER reader on '>pw' '~other:*' '+@all'");
  server_->Cli("CONFIG SET requirepass pw");
  struct Case {
    std::string url;
    bool set;  // SET instead of GET
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {PortUrl(*server_, ""),
       false,
       {"error_reply NOAUTH to GET: NOAUTH Authentication required", "--redis-password-file",
        "going on without the shared cache"}},
      {PortUrl(*server_, "reader:pw@"),
       false,
       {"error_reply NOPERM to GET: NOPERM", "no permissions", "going on without"}},
      {PortUrl(*server_, ":pw@", "/99"),
       false,
       {"error_reply ERR to SELECT 99: ERR DB index is out of range", "caching locally only"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.url);
    CapturedLog log;
    RedisFaultCounters faults;
    RedisClient client(ParseRedisUrl(c.url), milliseconds(1000), &faults);
    EXPECT_FALSE(client.Get("qvl:k"));
    EXPECT_EQ(faults.Get(RedisFault::kErrorReply), 1);
    EXPECT_EQ(log.Count(c.parts), 1u) << log.Joined();
    usleep(1100 * 1000);  // past a back-off
    EXPECT_FALSE(client.Get("qvl:k"));
    EXPECT_EQ(faults.Get(RedisFault::kErrorReply), 2);
    EXPECT_EQ(log.Count({"error_reply"}), 1u) << log.Joined();
  }
}

TEST_F(RedisClientLive, AFullRedisThatMayNotEvictIsLogged) {
  server_->Cli("CONFIG SET maxmemory-policy noeviction");
  server_->Cli("CONFIG SET maxmemory 1");
  CapturedLog log;
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(1000), &faults);
  EXPECT_FALSE(client.Set("qvl:k", "v", 0, milliseconds(1000)));
  EXPECT_EQ(log.Count({"error_reply OOM to SET: OOM command not allowed", "allkeys-lru",
                       "the value is not stored"}),
            1u)
      << log.Joined();
  server_->Cli("CONFIG SET maxmemory 0");
}

// At start the log says whether Redis answers, and if not why: "redis at ..." alone said
// nothing of a Redis that was never reached.
TEST_F(RedisClientLive, TheStartProbeSaysWhetherRedisAnswers) {
  {
    CapturedLog log;
    SharedCacheOptions o;
    o.url = server_->url();
    SharedCache cache(o);
    EXPECT_TRUE(cache.ProbeRedis());
    EXPECT_EQ(log.Count({"connected, database 0"}), 1u) << log.Joined();
  }
  server_->Cli("CONFIG SET requirepass pw");
  CapturedLog log;
  SharedCacheOptions o;
  o.url = server_->url();
  SharedCache cache(o);
  EXPECT_FALSE(cache.ProbeRedis());
  EXPECT_EQ(log.Count({"error_reply NOAUTH to GET: NOAUTH Authentication required"}), 1u)
      << log.Joined();
  EXPECT_EQ(log.Count({"did not answer qvl's first lookup", "local caches only"}), 1u)
      << log.Joined();
}

TEST_F(RedisClientLive, ARestartBetweenCommandsCostsNothing) {
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(1000), &faults);
  ASSERT_TRUE(client.Set("k", "v", 0, milliseconds(1000)));  // leaves a kept connection
  server_->Kill();
  server_->Start();
  // The kept connection is closed; the command goes again on a new one.
  EXPECT_TRUE(client.Set("k", "w", 0, milliseconds(1000)));
  EXPECT_EQ(client.Get("k").value_or(""), "w");
  for (int k = 0; k < static_cast<int>(RedisFault::kCount); ++k)
    EXPECT_EQ(faults.Get(static_cast<RedisFault>(k)), 0);
}

TEST_F(RedisClientLive, RecoversAfterARestart) {
  RedisFaultCounters faults;
  RedisClient client(ParseRedisUrl(server_->url()), milliseconds(500), &faults);
  ASSERT_TRUE(client.Set("k", "v", 0, milliseconds(500)));
  server_->Kill();
  EXPECT_FALSE(client.Get("k"));
  EXPECT_GE(faults.Get(RedisFault::kUnreachable), 1);
  server_->Start();
  // The client waits out its back-off before it connects again.
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {
    back = client.Set("k", "w", 0, milliseconds(500));
    if (!back) usleep(100 * 1000);
  }
  ASSERT_TRUE(back);
  EXPECT_EQ(client.Get("k").value_or(""), "w");
}

}  // namespace
}  // namespace qvl
