// The tiny fixture model's cases as engine requests, and a collector of a request's
// updates: shared by the engine's end-to-end tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "engine/engine.h"
#include "model/qwen3vl.h"

namespace qvl {

inline const std::string kModelDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";
inline const std::string kCasesDir = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

inline nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileToString(path));
}

inline std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kCasesDir))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// The fixture's request.json as a GenerationRequest (text, image_url and video parts).
inline GenerationRequest LoadCase(const std::string& name) {
  const nlohmann::json req = ReadJson(kCasesDir + "/" + name + "/request.json");
  GenerationRequest r;
  for (const auto& m : req["messages"]) {
    ChatMessage msg;
    msg.role = m["role"];
    if (m["content"].is_string()) {
      msg.content_is_string = true;
      msg.parts.push_back({ChatPart::Kind::kText, m["content"]});
    } else {
      for (const auto& p : m["content"]) {
        if (p["type"] == "text") {
          msg.parts.push_back({ChatPart::Kind::kText, p["text"]});
        } else if (p["type"] == "video") {
          msg.parts.push_back({ChatPart::Kind::kVideo, ""});
          VideoInput video;
          video.name = "video " + std::to_string(r.videos.size() + 1);
          video.fps = p["fps"];
          for (const auto& frame : p["video"]) {
            const std::string bytes =
                ReadFileToString(kCasesDir + "/" + name + "/" + frame.get<std::string>());
            video.frames.emplace_back(bytes.begin(), bytes.end());
          }
          r.videos.push_back(std::move(video));
        } else {
          msg.parts.push_back({ChatPart::Kind::kImage, ""});
          const std::string bytes = ReadFileToString(kCasesDir + "/" + name + "/" +
                                                     p["image_url"]["url"].get<std::string>());
          r.images.push_back({"image " + std::to_string(r.images.size() + 1),
                              {bytes.begin(), bytes.end()},
                              "",
                              ImageDetail::kAuto});
        }
      }
    }
    r.messages.push_back(std::move(msg));
  }
  r.sampling.temperature = 0.0f;
  r.max_tokens = 16;
  return r;
}

// Collects a request's updates and waits for the last one.
struct Collector {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  std::string text;
  std::vector<int32_t> tokens;
  GenerationUpdate last;
  int updates = 0;

  UpdateSink Sink() {
    return [this](GenerationUpdate&& u) {
      std::lock_guard<std::mutex> lock(mu);
      ++updates;
      text += u.text;
      for (const GeneratedToken& t : u.tokens) tokens.push_back(t.chosen.id);
      if (u.finished) {
        last = std::move(u);
        done = true;
        done_cv.notify_all();
      }
    };
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [&] { return done; });
  }
};

inline std::unique_ptr<Engine> MakeEngine(EngineOptions options = EngineOptions(),
                                          DType kv_dtype = DType::kF32) {
  ModelOptions m;
  m.precision = MatmulPrecision::kF32;
  m.kv_dtype = kv_dtype;
  m.text_weights = m.vision_weights = WeightFormat::kBF16;  // the checkpoint's own, exact
  m.weight_cache_dir = "none";
  options.threads = 2;
  return std::make_unique<Engine>(Qwen3VLModel::Load(kModelDir, m), options);
}

inline std::vector<int32_t> GoldenTokens(const std::string& name) {
  const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
  std::vector<int32_t> t;
  for (int64_t id : meta["greedy_tokens"]) t.push_back(static_cast<int32_t>(id));
  return t;
}

// Every choice of a request with n answers: tokens and last update per choice.
struct ChoicesCollector {
  explicit ChoicesCollector(int n) : tokens(n), text(n), last(n), unfinished(n) {}
  std::mutex mu;
  std::condition_variable done_cv;
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::string> text;
  std::vector<GenerationUpdate> last;
  int unfinished;

  UpdateSink Sink() {
    return [this](GenerationUpdate&& u) {
      std::lock_guard<std::mutex> lock(mu);
      ASSERT_GE(u.choice, 0);
      ASSERT_LT(u.choice, static_cast<int>(tokens.size()));
      text[u.choice] += u.text;
      for (const GeneratedToken& t : u.tokens) tokens[u.choice].push_back(t.chosen.id);
      if (u.finished) {
        EXPECT_FALSE(last[u.choice].finished) << "choice " << u.choice << " finished twice";
        last[u.choice] = std::move(u);
        --unfinished;
        done_cv.notify_all();
      }
    };
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [&] { return unfinished == 0; });
  }
};

}  // namespace qvl
