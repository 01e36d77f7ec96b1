#include "text/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace qvl::text {
namespace {

std::string Replaced(std::string_view bytes) {
  std::string out;
  AppendReplacingInvalidUtf8(bytes, &out);
  return out;
}

constexpr std::string_view kFffd = kReplacementCharacter;

// Expected strings are Python's bytes.decode("utf-8", errors="replace").
TEST(Utf8Test, ReplacesMaximalSubpartsLikePython) {
  EXPECT_EQ(Replaced("a\xFF"
                     "b"),
            StrCat("a", kFffd, "b"));
  EXPECT_EQ(Replaced("\xE4\xB8"), kFffd);  // truncated at the end
  EXPECT_EQ(Replaced("\xE4\xB8"
                     "a"),
            StrCat(kFffd, "a"));                                     // cut short by ASCII
  EXPECT_EQ(Replaced("\xF0\x80\x80"), StrCat(kFffd, kFffd, kFffd));  // overlong
  EXPECT_EQ(Replaced("\xED\xA0\x80"), StrCat(kFffd, kFffd, kFffd));  // surrogate
  EXPECT_EQ(Replaced("\xC0\xAF"), StrCat(kFffd, kFffd));
  EXPECT_EQ(Replaced("\xF4\x90\x80\x80"), StrCat(kFffd, kFffd, kFffd, kFffd));  // > U+10FFFF
  EXPECT_EQ(Replaced("\xE4\xB8\xAD\xE6"), StrCat("\xE4\xB8\xAD", kFffd));
  EXPECT_EQ(Replaced("\x80\x80"), StrCat(kFffd, kFffd));
  EXPECT_EQ(Replaced("\xF0\x9F\x98"), kFffd);
  EXPECT_EQ(Replaced("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(Replaced(""), "");
}

TEST(Utf8Test, ScanTellsTruncatedFromInvalid) {
  EXPECT_EQ(ScanUtf8("\xF0\x9F\x98", 0).status, Utf8Status::kTruncated);
  EXPECT_EQ(ScanUtf8("\xF0\x9F\x98", 0).length, 3u);
  EXPECT_EQ(ScanUtf8("\xF0\x9F"
                     "a",
                     0)
                .status,
            Utf8Status::kInvalid);
  EXPECT_EQ(ScanUtf8("\xF0\x9F"
                     "a",
                     0)
                .length,
            2u);
  EXPECT_EQ(ScanUtf8("\xE0\x80", 0).status, Utf8Status::kInvalid);  // overlong lead
  EXPECT_EQ(ScanUtf8("\xE0\x80", 0).length, 1u);
  EXPECT_EQ(ScanUtf8("x\xC3\xA9", 1).status, Utf8Status::kValid);
  EXPECT_EQ(ScanUtf8("x\xC3\xA9", 1).length, 2u);
}

TEST(Utf8Test, EncodesAndDecodesEveryScalarValue) {
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string utf8;
    AppendUtf8(c, &utf8);
    const Utf8Sequence seq = ScanUtf8(utf8, 0);
    ASSERT_EQ(seq.status, Utf8Status::kValid) << std::hex << static_cast<uint32_t>(c);
    ASSERT_EQ(seq.length, utf8.size()) << std::hex << static_cast<uint32_t>(c);
    ASSERT_EQ(DecodeUtf8(utf8, 0, seq.length), c) << std::hex << static_cast<uint32_t>(c);
  }
}

TEST(Utf8Test, ValidityCheck) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xE4\xBD"));
  EXPECT_FALSE(IsValidUtf8("abc\xFF"));
}

}  // namespace
}  // namespace qvl::text
