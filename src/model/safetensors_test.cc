#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/mapped_file.h"
#include "model/scratch_folder.h"

namespace qvl {
namespace {

const std::string kPath = "t.safetensors";

// A safetensors image: 8-byte length (the header's own unless `declared` is given), the
// header text, then `data_bytes` zero bytes.
std::vector<uint8_t> Image(const std::string& header, size_t data_bytes,
                           uint64_t declared = UINT64_MAX) {
  const uint64_t length = declared == UINT64_MAX ? header.size() : declared;
  std::vector<uint8_t> bytes(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(length >> (8 * i));
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  return bytes;
}

// Parses the image and returns the error message, or "" when it is accepted.
std::string ParseError(const std::vector<uint8_t>& bytes) {
  try {
    ParseSafetensors(bytes.data(), bytes.size(), &kPath, nullptr);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    return e.what();
  }
  return "";
}

std::string Header(const std::string& tensors) {
  std::string h = "{" + tensors + "}";
  h.append((8 - h.size() % 8) % 8, ' ');
  return h;
}

TEST(Safetensors, AcceptsWellFormedImages) {
  std::map<std::string, std::string> metadata;
  const std::vector<uint8_t> bytes =
      Image(Header(R"("__metadata__":{"format":"pt"},)"
                   R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[8,16]},)"
                   R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("e":{"dtype":"I64","shape":[0],"data_offsets":[16,16]})"),
            16);
  const std::vector<TensorInfo> t = ParseSafetensors(bytes.data(), bytes.size(), &kPath, &metadata);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "a");  // file order
  EXPECT_EQ(t[1].name, "b");
  EXPECT_EQ(t[2].name, "e");
  EXPECT_EQ(t[1].dtype, DType::kBF16);
  EXPECT_EQ(t[1].ShapeString(), "[2, 2]");
  EXPECT_EQ(t[1].numel(), 4);
  EXPECT_EQ(t[1].nbytes, 8u);
  EXPECT_EQ(t[2].numel(), 0);
  EXPECT_EQ(t[1].file, &kPath);
  EXPECT_EQ(t[0].data, bytes.data() + bytes.size() - 16);
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(ParseError(Image("{}      ", 0)), "");
}

TEST(Safetensors, RefusesBrokenFraming) {
  EXPECT_EQ(ParseError({1, 2, 3, 4}),
            "t.safetensors: file is 4 bytes, too short for a safetensors header (truncated?)");
  EXPECT_EQ(ParseError(Image("{}", 10, 1000)),
            "t.safetensors: header length 1000 is larger than the file (20 bytes; truncated?)");
  EXPECT_EQ(ParseError(Image("{}", 0, 200'000'000)),
            "t.safetensors: header length 200000000 exceeds the 100 MB limit (not a safetensors "
            "file?)");
  EXPECT_EQ(ParseError(Image("[1, 2]  ", 0)),
            "t.safetensors: header is not a JSON object (not a safetensors file?)");
  const std::string corrupt = ParseError(Image(R"({"a": {"dtype": )", 0));
  EXPECT_EQ(corrupt.rfind("t.safetensors: header: malformed JSON: ", 0), 0u) << corrupt;
  EXPECT_NE(ParseError(Image(Header(R"("a":1,"a":2)"), 0)).find("duplicate key \"a\""),
            std::string::npos);
}

TEST(Safetensors, RefusesBadTensorEntries) {
  EXPECT_EQ(
      ParseError(Image(Header(R"("a":{"dtype":"F8_E5M2","shape":[2],"data_offsets":[0,2]})"), 2)),
      "t.safetensors: tensor a has unsupported dtype \"F8_E5M2\" (qvl reads F32, BF16, F16, "
      "F64, I64, I32, I16, I8, U8, BOOL, F8_E4M3)");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), 8)),
            "t.safetensors: tensor a: dtype F32 x shape [3] is 12 bytes but data_offsets [0, 8] "
            "span 8");
  EXPECT_EQ(
      ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]})"), 0)),
      "t.safetensors: tensor a: shape must hold non-negative integers, got -1");
  EXPECT_EQ(
      ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,0]})"), 0)),
      "t.safetensors: tensor a: shape must hold non-negative integers, got 1.5");
  EXPECT_EQ(
      ParseError(Image(
          Header(R"("a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]})"),
          0)),
      "t.safetensors: tensor a: shape [4294967296,4294967296] overflows a 64-bit byte count");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0]})"), 4)),
            "t.safetensors: tensor a: data_offsets must be a list of two integers [begin, end], "
            "got [0]");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"shape":[1],"data_offsets":[0,4]})"), 4)),
            "t.safetensors: tensor a: dtype is missing");
  EXPECT_EQ(ParseError(Image(Header(R"("a":[1])"), 0)),
            "t.safetensors: tensor a: entry must be an object, got array");
  EXPECT_EQ(ParseError(Image(Header(R"("__metadata__":{"n":1})"), 0)),
            "t.safetensors: __metadata__ must map strings to strings, but \"n\" holds integer");
}

// Regression (found while hardening): a zero-sized tensor whose other dimensions
// multiply past INT64_MAX was accepted, and TensorInfo::numel() then overflowed.
TEST(Safetensors, RefusesShapesWhoseElementCountOverflows) {
  EXPECT_EQ(
      ParseError(Image(
          Header(R"("a":{"dtype":"U8","shape":[9223372036854775807,2,0],"data_offsets":[0,0]})"),
          0)),
      "t.safetensors: tensor a: shape [9223372036854775807,2,0] overflows a 64-bit byte count");
  const std::vector<uint8_t> image = Image(
      Header(R"("a":{"dtype":"U8","shape":[4611686018427387904,0],"data_offsets":[0,0]})"), 0);
  const std::vector<TensorInfo> empty =
      ParseSafetensors(image.data(), image.size(), &kPath, nullptr);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].numel(), 0);
}

TEST(Safetensors, RefusesBadOffsets) {
  EXPECT_EQ(
      ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), 8)),
      "t.safetensors: tensor a: data_offsets [0, 16] point past the end of the file (the "
      "data section has 8 bytes; truncated?)");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]})"), 8)),
            "t.safetensors: tensor a: data_offsets [8, 4] end before they begin");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]})"),
                             12)),
            "t.safetensors: tensors a and b overlap (data_offsets [0, 8] and [4, 12])");
  EXPECT_EQ(ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]})"),
                             20)),
            "t.safetensors: bytes [8, 12) of the data section belong to no tensor (hole before b)");
  EXPECT_EQ(
      ParseError(Image(Header(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), 12)),
      "t.safetensors: the data section has 4 bytes after the last tensor (12 bytes, tensors "
      "cover 8; trailing garbage?)");
  // This header is 54 bytes: two spaces of padding put the data at file offset 64, three
  // at 65, where no F32 may start.
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_EQ(ParseError(Image(header + "  ", 4)), "");
  EXPECT_EQ(
      ParseError(Image(header + "   ", 4)),
      "t.safetensors: tensor a: data at file offset 65 is not aligned to its 4-byte elements");
}

TEST(Safetensors, TruncatedFixtureNamesTheProblem) {
  const MappedFile file(kTinyModelDir + "/model.safetensors");
  std::vector<uint8_t> bytes(file.data(), file.data() + file.size() / 2);
  const std::string error = ParseError(bytes);
  EXPECT_NE(error.find("point past the end of the file"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated?"), std::string::npos) << error;
}

TEST(SafetensorsFile, OpensFixtureAndFindsTensors) {
  const SafetensorsFile file(kTinyModelDir + "/model.safetensors");
  EXPECT_EQ(file.tensors().size(), 121u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  const TensorInfo* embed = file.Find("model.language_model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->ShapeString(), "[151936, 64]");
  EXPECT_EQ(embed->dtype, DType::kBF16);
  EXPECT_EQ(*embed->file, file.path());
  EXPECT_EQ(file.Find("lm_head.weight"), nullptr);
}

TEST(SafetensorsWriter, EncodesHeaderLikeTheReferenceWriter) {
  const std::vector<TensorSpec> specs = {{"w", DType::kBF16, {2, 3}}, {"b", DType::kF32, {3}}};
  const std::string tensors = R"("w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
                              R"("b":{"dtype":"F32","shape":[3],"data_offsets":[12,24]}})";
  EXPECT_EQ(EncodeSafetensorsHeader(specs, {{"format", "pt"}}),
            R"({"__metadata__":{"format":"pt"},)" + tensors);  // 144 bytes, no padding
  EXPECT_EQ(EncodeSafetensorsHeader(specs, {}), "{" + tensors + "       ");  // 113 + 7
  EXPECT_THROW(EncodeSafetensorsHeader({{"x", DType::kF32, {1}}, {"x", DType::kF32, {1}}}, {}),
               Error);
}

TEST(SafetensorsWriter, SmallTensorsRoundTripAligned) {
  ScratchFolder dir("st_small");
  const std::vector<float> f = {1.5f, -2.0f, 3.25f};
  const std::vector<int64_t> ids = {7, -9};
  std::vector<TensorData> tensors(3);
  tensors[0].spec = {"bytes", DType::kU8, {3}};
  tensors[0].bytes = {1, 2, 3};
  tensors[1].spec = {"f", DType::kF32, {3}};
  tensors[1].bytes.resize(12);
  std::memcpy(tensors[1].bytes.data(), f.data(), 12);
  tensors[2].spec = {"ids", DType::kI64, {2}};
  tensors[2].bytes.resize(16);
  std::memcpy(tensors[2].bytes.data(), ids.data(), 16);
  WriteSafetensors(dir.File("x.safetensors"), tensors);

  const SafetensorsFile file(dir.File("x.safetensors"));
  ASSERT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(file.tensors()[0].name, "ids");  // largest elements first
  EXPECT_EQ(file.tensors()[1].name, "f");
  EXPECT_EQ(file.tensors()[2].name, "bytes");
  EXPECT_EQ(std::memcmp(file.Find("f")->data, f.data(), 12), 0);
  EXPECT_EQ(std::memcmp(file.Find("ids")->data, ids.data(), 16), 0);
  EXPECT_EQ(file.Find("bytes")->data[2], 3);
  EXPECT_TRUE(file.metadata().empty());

  tensors[0].bytes.pop_back();
  EXPECT_THROW(WriteSafetensors(dir.File("y.safetensors"), tensors), Error);
}

TEST(SafetensorsWriter, StreamsLargeTensorsInBoundedChunks) {
  ScratchFolder dir("st_stream");
  const std::vector<TensorSpec> specs = {
      {"a", DType::kF32, {5}}, {"big", DType::kF32, {3000, 3001}}, {"z", DType::kF32, {3}}};
  size_t calls = 0;
  WriteSafetensors(dir.File("s.safetensors"), specs,
                   [&](size_t index, size_t offset, uint8_t* dst, size_t nbytes) {
                     ++calls;
                     EXPECT_EQ(offset % 4, 0u);
                     EXPECT_EQ(nbytes % 4, 0u);
                     EXPECT_EQ(reinterpret_cast<uintptr_t>(dst) % 4, 0u);
                     EXPECT_LE(nbytes, size_t{32} << 20);
                     for (size_t i = 0; i < nbytes / 4; ++i) {
                       const float v = static_cast<float>(index * 10'000'000 + offset / 4 + i);
                       std::memcpy(dst + 4 * i, &v, 4);
                     }
                   },
                   {{"format", "pt"}});
  EXPECT_GE(calls, 3u);
  const SafetensorsFile file(dir.File("s.safetensors"));
  EXPECT_EQ(file.mapped().size(), 8 + EncodeSafetensorsHeader(specs, {{"format", "pt"}}).size() +
                                      4 * (5 + 3000 * 3001 + 3));
  for (size_t index = 0; index < specs.size(); ++index) {
    const TensorInfo& t = file.tensors()[index];
    ASSERT_EQ(t.name, specs[index].name);
    std::vector<float> values(static_cast<size_t>(t.numel()));
    std::memcpy(values.data(), t.data, t.nbytes);
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(values[i], static_cast<float>(index * 10'000'000 + i)) << t.name << " " << i;
    }
  }
}

TEST(SafetensorsWriter, FailureLeavesNoFile) {
  ScratchFolder dir("st_fail");
  EXPECT_THROW(WriteSafetensors(dir.File("f.safetensors"), {{"a", DType::kF32, {4}}},
                                [](size_t, size_t, uint8_t*, size_t) {
                                  Fail(ErrorCode::kInternal, "generator failed");
                                }),
               Error);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  try {
    WriteSafetensors(dir.File("g.safetensors"), {{"u", DType::kU8, {3}}, {"f", DType::kF32, {1}}},
                     [](size_t, size_t, uint8_t*, size_t) {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "cannot write tensor f at data offset 3: not aligned to its 4-byte elements "
                 "(order tensors by element size, largest first)");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace qvl
