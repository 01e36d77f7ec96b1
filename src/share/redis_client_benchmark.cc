// The Redis round trip of one image's encoding (the 2B model's 768-token bench image:
// 24 MiB with the DeepStack taps) against a redis-server on a loopback port: the fetch
// alone, and fetch + envelope check + decode as a replica does it.
#include <benchmark/benchmark.h>

#include "share/encoding_codec.h"
#include "share/redis_client.h"
#include "share/redis_test_server.h"

namespace qvl {
namespace {

constexpr int64_t kTokens = 768, kDim = 2048;
constexpr size_t kLayers = 3;

struct Fixture {
  Fixture() : client(ParseRedisUrl(server.url()), std::chrono::milliseconds(5000), &faults) {
    VisionOutput v;
    v.tokens = kTokens;
    v.embeds.assign(kTokens * kDim, 0.5f);
    v.deepstack.assign(kLayers, std::vector<float>(kTokens * kDim, -0.25f));
    value = EncodeVisionOutput(kKey, v);
    client.Set(kKey, value, 0, std::chrono::milliseconds(5000));
  }
  static constexpr const char* kKey = "bench:enc";
  RedisTestServer server;
  RedisFaultCounters faults;
  RedisClient client;
  std::string value;
};

Fixture* Shared() {
  static Fixture f;
  return &f;
}

void BM_GetEncoding(benchmark::State& state) {
  if (!RedisTestServer::Available()) return state.SkipWithError("redis-server is not installed");
  Fixture* f = Shared();
  for (auto _ : state) {
    std::optional<std::string> got = f->client.Get(Fixture::kKey);
    if (!got) return state.SkipWithError("GET failed");
    benchmark::DoNotOptimize(got->data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->value.size()));
}
BENCHMARK(BM_GetEncoding)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GetAndDecodeEncoding(benchmark::State& state) {
  if (!RedisTestServer::Available()) return state.SkipWithError("redis-server is not installed");
  Fixture* f = Shared();
  for (auto _ : state) {
    std::optional<std::string> got = f->client.Get(Fixture::kKey);
    if (!got) return state.SkipWithError("GET failed");
    std::optional<VisionOutput> out =
        DecodeVisionOutput(Fixture::kKey, *got, {kTokens, kDim, kLayers});
    if (!out) return state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(out->embeds.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->value.size()));
}
BENCHMARK(BM_GetAndDecodeEncoding)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
