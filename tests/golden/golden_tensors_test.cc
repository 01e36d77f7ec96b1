#include "golden_tensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"

namespace qvl {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kTiny = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl";

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A copy of a fixture case in a fixture layout of its own (cases/NAME next to model/, a
// link to the tiny model), to be changed by the test.
class CaseCopy {
 public:
  explicit CaseCopy(const std::string& name)
      : root_(fs::path(::testing::TempDir()) / ("golden_" + name)) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "cases");
    fs::create_directory_symlink(kTiny + "/model", root_ / "model");
    fs::copy(kTiny + "/cases/" + name, dir(), fs::copy_options::recursive);
  }
  ~CaseCopy() { fs::remove_all(root_); }
  std::string dir() const { return (root_ / "cases" / name()).string(); }
  std::string name() const { return root_.filename().string().substr(7); }

 private:
  fs::path root_;
};

// A safetensors file of `tensors` in order, as the upstream fixtures write it.
std::string Safetensors(const std::vector<std::pair<std::string, RawTensor>>& tensors) {
  Json header = Json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype},
                    {"shape", t.shape},
                    {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  }
  const std::string text = header.dump();
  const uint64_t size = text.size();
  return std::string(reinterpret_cast<const char*>(&size), 8) + text + data;
}

// The repository's cases hold pixel_values as a digest: reading it preprocesses the
// images, and the bytes are the ones the digest names.
TEST(GoldenTensorsTest, DigestedTensorIsTheCheckedPreprocessing) {
  const GoldenTensors golden(kTiny + "/cases/03_two_images");
  EXPECT_EQ(golden.name(), "03_two_images");
  ASSERT_TRUE(golden.Has("pixel_values"));
  EXPECT_FALSE(golden.Stored("pixel_values"));
  EXPECT_TRUE(golden.Stored("vision.embed"));
  EXPECT_EQ(golden.Shape("pixel_values"), (std::vector<int64_t>{596, 1536}));
  const std::vector<float> pixels = golden.F32("pixel_values");
  ASSERT_EQ(pixels.size(), 596u * 1536);
  EXPECT_EQ(golden.Mismatch("pixel_values", RawF32Tensor(pixels, {596, 1536}), 0), "");
  const std::vector<std::string> names = golden.TensorNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "pixel_values"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "logits_last"), names.end());

  // One changed value is not the reference's, whatever the tolerance.
  std::vector<float> changed = pixels;
  changed[1234] = std::nextafter(changed[1234], 2.0f);
  const std::string m = golden.Mismatch("pixel_values", RawF32Tensor(changed, {596, 1536}), 1e-3);
  EXPECT_NE(m.find("golden case 03_two_images: pixel_values is not the reference's bit for bit"),
            std::string::npos)
      << m;
  EXPECT_NE(
      golden.Mismatch("pixel_values", RawF32Tensor(pixels, {1536, 596}), 0).find("[1536,596]"),
      std::string::npos);
}

TEST(GoldenTensorsTest, AWrongDigestFailsNamingTheCaseAndTensor) {
  const CaseCopy copy("02_one_image_jpeg");
  const std::string path = copy.dir() + "/derived_digests.json";
  Json digests = Json::parse(ReadFileToString(path));
  std::string& sha = digests["tensors"][0]["sha256"].get_ref<std::string&>();
  sha[10] = sha[10] == '0' ? '1' : '0';
  WriteFile(path, digests.dump());
  const GoldenTensors golden(copy.dir());
  const std::string error = ErrorOf([&] { golden.F32("pixel_values"); });
  EXPECT_NE(error.find("golden case 02_one_image_jpeg: pixel_values is not the reference's bit for "
                       "bit: sha256 "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(sha), std::string::npos) << error;
}

// Frames swapped in the case folder: qvl's pixel_values_videos are no longer the reference's.
TEST(GoldenTensorsTest, AChangedInputFailsNamingTheCaseAndTensor) {
  const CaseCopy copy("07_video_frames");
  const fs::path frames = fs::path(copy.dir()) / "frames/clip";
  fs::rename(frames / "000.png", frames / "tmp.png");
  fs::rename(frames / "002.png", frames / "000.png");
  fs::rename(frames / "tmp.png", frames / "002.png");
  const GoldenTensors golden(copy.dir());
  const std::string error = ErrorOf([&] { golden.Tensor("pixel_values_videos"); });
  EXPECT_NE(error.find("golden case 07_video_frames: pixel_values_videos is not the reference's"),
            std::string::npos)
      << error;
}

// One byte of a frame flipped: the frame no longer decodes, and the error says which
// case's tensor needed it.
TEST(GoldenTensorsTest, ABrokenInputFailsNamingTheCaseAndTensor) {
  const CaseCopy copy("07_video_frames");
  const std::string frame = copy.dir() + "/frames/clip/005.png";
  std::string bytes = ReadFileToString(frame);
  bytes[bytes.size() / 2] ^= 1;
  WriteFile(frame, bytes);
  const GoldenTensors golden(copy.dir());
  const std::string error = ErrorOf([&] { golden.Tensor("pixel_values_videos"); });
  EXPECT_NE(error.find("golden case 07_video_frames: pixel_values_videos (digested): qvl's "
                       "preprocessing of the case's inputs failed: video 1 frame 5: "),
            std::string::npos)
      << error;
}

// The upstream format (every tensor in tensors.safetensors, no digests) is read as it is:
// nothing is preprocessed, and comparisons take the tolerance.
TEST(GoldenTensorsTest, UpstreamFormatIsReadAsStored) {
  const std::string source = kTiny + "/cases/02_one_image_jpeg";
  const GoldenTensors slim(source);
  const std::vector<float> pixels = slim.F32("pixel_values");
  const std::vector<float> logits = slim.F32("logits_last");
  const std::vector<int64_t> ids = slim.I64("input_ids");
  const CaseCopy copy("02_one_image_jpeg");
  fs::remove(copy.dir() + "/derived_digests.json");
  fs::remove_all(copy.dir() + "/images");  // upstream tensors need no inputs
  WriteFile(copy.dir() + "/tensors.safetensors",
            Safetensors({{"input_ids", slim.Tensor("input_ids")},
                         {"pixel_values", RawF32Tensor(pixels, {320, 1536})},
                         {"logits_last", slim.Tensor("logits_last")}}));
  const GoldenTensors golden(copy.dir());
  EXPECT_EQ(golden.TensorNames(),
            (std::vector<std::string>{"input_ids", "logits_last", "pixel_values"}));
  EXPECT_TRUE(golden.Stored("pixel_values"));
  EXPECT_EQ(golden.F32("pixel_values"), pixels);
  EXPECT_EQ(golden.F32("logits_last"), logits);
  EXPECT_EQ(golden.I64("input_ids"), ids);

  std::vector<float> near = pixels;
  near[7] += 5e-7f;
  EXPECT_EQ(golden.Mismatch("pixel_values", RawF32Tensor(near, {320, 1536}), 1e-6), "");
  near[9] += 0.25f;
  const std::string m = golden.Mismatch("pixel_values", RawF32Tensor(near, {320, 1536}), 1e-6);
  EXPECT_NE(
      m.find("golden case 02_one_image_jpeg: pixel_values differs from the reference by 0.25"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find("at value 9"), std::string::npos) << m;
  EXPECT_NE(ErrorOf([&] { golden.I64("pixel_values"); }).find("pixel_values is F32"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              golden.Tensor("vision.embed");
            }).find("golden case 02_one_image_jpeg: no tensor vision.embed"),
            std::string::npos);
}

TEST(GoldenTensorsTest, ATensorBothStoredAndDigestedIsRefused) {
  const CaseCopy copy("06_rgba_png");
  const std::vector<float> pixels = GoldenTensors(copy.dir()).F32("pixel_values");
  WriteFile(copy.dir() + "/tensors.safetensors",
            Safetensors({{"pixel_values", RawF32Tensor(pixels, {280, 1536})}}));
  EXPECT_NE(ErrorOf([&] { GoldenTensors golden(copy.dir()); })
                .find("06_rgba_png: pixel_values is both in tensors.safetensors and in "
                      "derived_digests.json"),
            std::string::npos);
}

}  // namespace
}  // namespace qvl
