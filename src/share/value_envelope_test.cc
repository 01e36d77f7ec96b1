#include "share/value_envelope.h"

#include <gtest/gtest.h>

#include "share/encoding_codec.h"

namespace qvl {
namespace {

TEST(ValueEnvelope, OpensWhatWasSealed) {
  const std::string v = SealValue("QVLT", 3, "k1", "payload bytes");
  ASSERT_TRUE(OpenValue("QVLT", 3, "k1", v).has_value());
  EXPECT_EQ(*OpenValue("QVLT", 3, "k1", v), "payload bytes");
}

TEST(ValueEnvelope, RefusesOtherVersionKeyMagicAndAnyFlippedByte) {
  const std::string v = SealValue("QVLT", 3, "k1", "payload bytes");
  EXPECT_FALSE(OpenValue("QVLT", 4, "k1", v));
  EXPECT_FALSE(OpenValue("QVLT", 3, "k2", v));
  EXPECT_FALSE(OpenValue("QVLA", 3, "k1", v));
  EXPECT_FALSE(OpenValue("QVLT", 3, "k1", v.substr(0, v.size() - 1)));
  EXPECT_FALSE(OpenValue("QVLT", 3, "k1", v + "x"));
  EXPECT_FALSE(OpenValue("QVLT", 3, "k1", ""));
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x10;
    EXPECT_FALSE(OpenValue("QVLT", 3, "k1", bad)) << "byte " << i;
  }
}

TEST(Checksum64, DependsOnEveryByteAndTheLength) {
  std::string s(100, 'a');
  const uint64_t base = Checksum64(s);
  for (size_t i = 0; i < s.size(); ++i) {
    std::string t = s;
    t[i] = 'b';
    EXPECT_NE(Checksum64(t), base) << i;
  }
  EXPECT_NE(Checksum64(std::string(100, '\0')), Checksum64(std::string(101, '\0')));
}

VisionOutput SampleOutput(int64_t tokens, int64_t dim, size_t layers) {
  VisionOutput v;
  v.tokens = tokens;
  for (int64_t i = 0; i < tokens * dim; ++i) v.embeds.push_back(0.25f * static_cast<float>(i) - 3);
  for (size_t l = 0; l < layers; ++l) {
    v.deepstack.emplace_back();
    for (int64_t i = 0; i < tokens * dim; ++i)
      v.deepstack.back().push_back(static_cast<float>(l) + 1e-3f * static_cast<float>(i));
  }
  return v;
}

TEST(EncodingCodec, RoundTripsBitForBit) {
  const VisionOutput v = SampleOutput(6, 8, 3);
  const std::string bytes = EncodeVisionOutput("key", v);
  const std::optional<VisionOutput> back = DecodeVisionOutput("key", bytes, {6, 8, 3});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->tokens, 6);
  EXPECT_EQ(back->embeds, v.embeds);
  EXPECT_EQ(back->deepstack, v.deepstack);
}

TEST(EncodingCodec, RefusesAnotherShapeOrKey) {
  const std::string bytes = EncodeVisionOutput("key", SampleOutput(6, 8, 3));
  EXPECT_FALSE(DecodeVisionOutput("key", bytes, {4, 8, 3}));
  EXPECT_FALSE(DecodeVisionOutput("key", bytes, {6, 16, 3}));
  EXPECT_FALSE(DecodeVisionOutput("key", bytes, {6, 8, 2}));
  EXPECT_FALSE(DecodeVisionOutput("other", bytes, {6, 8, 3}));
}

}  // namespace
}  // namespace qvl
