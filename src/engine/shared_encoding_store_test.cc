// The engine's two hooks for a SharedEncodingStore, on the tiny fixture model: a replica
// offers what it encodes, another uses an encoding the store returns instead of running
// the vision tower, and both give the reference's greedy tokens.
#include "engine/shared_encoding_store.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "engine/engine.h"
#include "model/qwen3vl.h"

namespace qvl {
namespace {

const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";
const std::string kCase = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/03_two_images";

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
  const nlohmann::json req = nlohmann::json::parse(ReadFileToString(kCase + "/request.json"));
  GenerationRequest r;
  for (const auto& m : req["messages"]) {
    ChatMessage msg;
    msg.role = m["role"];
    for (const auto& p : m["content"]) {
      if (p["type"] == "text") {
        msg.parts.push_back({ChatPart::Kind::kText, p["text"]});
      } else {
        msg.parts.push_back({ChatPart::Kind::kImage, ""});
        const std::string bytes =
            ReadFileToString(kCase + "/" + p["image_url"]["url"].get<std::string>());
        r.images.push_back(
            {"image " + std::to_string(r.images.size() + 1), {bytes.begin(), bytes.end()}});
      }
    }
    r.messages.push_back(std::move(msg));
  }
  r.sampling.temperature = 0.0f;
  r.max_tokens = 16;
  r.ignore_eos = true;
  r.top_logprobs = 0;
  return r;
}

struct Result {
  std::vector<int32_t> tokens;
  GenerationUpdate last;
};

Result Ask(Engine& engine) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Result out;
  engine.Submit(TwoImageRequest(), [&](GenerationUpdate&& u) {
    std::lock_guard<std::mutex> lock(mu);
    for (const GeneratedToken& t : u.tokens) out.tokens.push_back(t.chosen.id);
    if (u.finished) {
      out.last = std::move(u);
      done = true;
      cv.notify_all();
    }
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return out;
}

std::unique_ptr<Engine> Replica(std::shared_ptr<SharedEncodingStore> store) {
  ModelOptions m;
  m.precision = MatmulPrecision::kF32;
  m.kv_dtype = DType::kF32;
  m.text_weights = m.vision_weights = WeightFormat::kBF16;
  m.weight_cache_dir = "none";
  EngineOptions options;
  options.threads = 2;
  options.shared_encodings = std::move(store);
  return std::make_unique<Engine>(Qwen3VLModel::Load(kModelDir, m), options);
}

std::vector<int32_t> GoldenTokens() {
  const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(kCase + "/meta.json"));
  std::vector<int32_t> t;
  for (int64_t id : meta["greedy_tokens"]) t.push_back(static_cast<int32_t>(id));
  return t;
}

std::vector<ImageSource> Sources(const Result& r) {
  std::vector<ImageSource> s;
  for (const ImageGrid& g : r.last.timings.images) s.push_back(g.source);
  return s;
}

TEST(SharedEncodings, AnotherReplicaSkipsTheVisionTowerWithTheSameTokens) {
  auto store = std::make_shared<MemoryStore>();
  const Result a = Ask(*Replica(store));
  EXPECT_EQ(a.tokens, GoldenTokens());
  EXPECT_EQ(Sources(a), std::vector<ImageSource>(2, ImageSource::kEncoder));
  EXPECT_GT(a.last.timings.vision_ms, 0);
  EXPECT_EQ(store->offers(), 2);

  auto b = Replica(store);
  const Result shared = Ask(*b);
  EXPECT_EQ(shared.tokens, GoldenTokens());
  EXPECT_EQ(Sources(shared), std::vector<ImageSource>(2, ImageSource::kSharedCache));
  EXPECT_EQ(shared.last.timings.vision_ms, 0);
  EXPECT_EQ(b->Stats().images_encoded, 0);
  EXPECT_EQ(store->offers(), 2);  // nothing new to offer

  // Asked again on that replica: its own caches answer.
  const Result local = Ask(*b);
  EXPECT_EQ(local.tokens, GoldenTokens());
  EXPECT_EQ(Sources(local), std::vector<ImageSource>(2, ImageSource::kLocalCache));
}

}  // namespace
}  // namespace qvl
