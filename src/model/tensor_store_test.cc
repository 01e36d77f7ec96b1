#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "model/safetensors.h"
#include "model/scratch_folder.h"

namespace qvl {
namespace {

TensorData F32Tensor(const std::string& name, std::vector<float> values) {
  TensorData t;
  t.spec = {name, DType::kF32, {static_cast<int64_t>(values.size())}};
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// Two shards: "a" and "b" in shard 1, "c" in shard 2, and the matching index.
void WriteShardedModel(const ScratchFolder& dir) {
  WriteSafetensors(dir.File("model-00001-of-00002.safetensors"),
                   {F32Tensor("a", {1, 2}), F32Tensor("b", {3})});
  WriteSafetensors(dir.File("model-00002-of-00002.safetensors"), {F32Tensor("c", {4, 5, 6})});
  dir.Write("model.safetensors.index.json", R"({"metadata": {"total_size": 24}, "weight_map": {
    "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
    "c": "model-00002-of-00002.safetensors"}})");
}

std::string OpenError(const std::string& dir) {
  try {
    TensorStore::OpenFolder(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorStore, OpensSingleFileFolder) {
  const TensorStore store = TensorStore::OpenFolder(kTinyModelDir);
  EXPECT_EQ(store.All().size(), 121u);
  EXPECT_EQ(store.total_bytes(), 20986880u);
  EXPECT_EQ(store.source(), kTinyModelDir + "/model.safetensors");
  EXPECT_EQ(store.Require("model.visual.pos_embed.weight").ShapeString(), "[144, 64]");
  try {
    store.Require("lm_head.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              kTinyModelDir + "/model.safetensors: tensor lm_head.weight is missing");
  }
}

TEST(TensorStore, OpensShardsThroughTheIndex) {
  ScratchFolder dir("shards_ok");
  WriteShardedModel(dir);
  const TensorStore store = TensorStore::OpenFolder(dir.path());
  EXPECT_EQ(store.files().size(), 2u);
  EXPECT_EQ(store.All().size(), 3u);
  EXPECT_EQ(store.total_bytes(), 24u);
  EXPECT_EQ(*store.Require("c").file, dir.File("model-00002-of-00002.safetensors"));
  float b;
  std::memcpy(&b, store.Require("b").data, 4);
  EXPECT_EQ(b, 3.0f);
  EXPECT_EQ(FindWeightFiles(dir.path()),
            (std::vector<std::string>{dir.File("model-00001-of-00002.safetensors"),
                                      dir.File("model-00002-of-00002.safetensors")}));
}

TEST(TensorStore, NoWeightsNamesTheFolder) {
  ScratchFolder dir("shards_none");
  EXPECT_EQ(OpenError(dir.path()),
            dir.path() +
                ": no model weights (neither model.safetensors nor model.safetensors.index.json)");
}

TEST(TensorStore, MissingShard) {
  ScratchFolder dir("shards_missing");
  WriteShardedModel(dir);
  dir.Remove("model-00002-of-00002.safetensors");
  EXPECT_EQ(OpenError(dir.path()), dir.File("model.safetensors.index.json") +
                                       ": shard model-00002-of-00002.safetensors is missing from " +
                                       dir.path());
}

TEST(TensorStore, IndexAndShardsMustAgree) {
  ScratchFolder dir("shards_disagree");
  WriteShardedModel(dir);
  const std::string index = dir.File("model.safetensors.index.json");
  dir.Write("model.safetensors.index.json", R"({"weight_map": {
    "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
    "c": "model-00002-of-00002.safetensors", "d": "model-00002-of-00002.safetensors"}})");
  EXPECT_EQ(OpenError(dir.path()),
            index +
                ": lists tensor d in shard model-00002-of-00002.safetensors, which does not "
                "hold it");
  dir.Write("model.safetensors.index.json", R"({"weight_map": {
    "a": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})");
  EXPECT_EQ(OpenError(dir.path()), dir.File("model-00001-of-00002.safetensors") +
                                       ": holds tensor b, which " + index + " does not list");
  dir.Write("model.safetensors.index.json", R"({"weight_map": {
    "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
    "c": "model-00002-of-00002.safetensors"}})");
  EXPECT_EQ(OpenError(dir.path()), dir.File("model-00001-of-00002.safetensors") +
                                       ": holds tensor b, which " + index +
                                       " assigns to model-00002-of-00002.safetensors");
}

TEST(TensorStore, DuplicateTensorAcrossShards) {
  ScratchFolder dir("shards_dup");
  WriteShardedModel(dir);
  WriteSafetensors(dir.File("model-00002-of-00002.safetensors"),
                   {F32Tensor("c", {4, 5, 6}), F32Tensor("a", {9})});
  EXPECT_EQ(OpenError(dir.path()),
            dir.File("model-00002-of-00002.safetensors") + ": tensor a is also in " +
                dir.File("model-00001-of-00002.safetensors") + "; each tensor must be stored once");
}

TEST(TensorStore, MalformedIndex) {
  ScratchFolder dir("shards_bad_index");
  WriteShardedModel(dir);
  const std::string index = dir.File("model.safetensors.index.json");
  dir.Write("model.safetensors.index.json", R"({"weight_map": {"a": "../elsewhere.safetensors"}})");
  EXPECT_EQ(OpenError(dir.path()), index +
                                       ": weight_map.a must name a shard file in the model "
                                       "folder, got \"../elsewhere.safetensors\"");
  dir.Write("model.safetensors.index.json", R"({"weight_map": {}})");
  EXPECT_EQ(OpenError(dir.path()), index + ": weight_map lists no tensors");
  dir.Write("model.safetensors.index.json", R"({"metadata": {}})");
  EXPECT_EQ(OpenError(dir.path()), index + ": weight_map is missing");
  dir.Write("model.safetensors.index.json", R"({"weight_map": )");
  EXPECT_EQ(OpenError(dir.path()).rfind(index + ": malformed JSON: ", 0), 0u);
}

}  // namespace
}  // namespace qvl
