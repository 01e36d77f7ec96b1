#include "text/unicode.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>
#include <random>
#include <string>

#include "text/utf8.h"

namespace qvl::text {
namespace {

std::string Nfc(std::string_view text) {
  std::string out;
  AppendNfc(text, &out);
  return out;
}

// utf8proc's NFC without the shortcut for text that cannot change.
std::string UncheckedNfc(const std::string& text) {
  utf8proc_uint8_t* normalized =
      utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
  std::string out(reinterpret_cast<const char*>(normalized));
  std::free(normalized);
  return out;
}

TEST(UnicodeTest, NfcComposesAndKeepsComposedText) {
  EXPECT_EQ(Nfc("Cafe\xCC\x81"), "Caf\xC3\xA9");  // e + combining acute -> é
  EXPECT_EQ(Nfc("Caf\xC3\xA9"), "Caf\xC3\xA9");
  EXPECT_EQ(Nfc("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"), "\xED\x95\x9C");  // jamo -> 한
  EXPECT_EQ(Nfc("\xED\x95\x9C\xEA\xB5\xAD"), "\xED\x95\x9C\xEA\xB5\xAD");  // 한국 stays
  EXPECT_EQ(Nfc("\xE2\x84\xAB"), "\xC3\x85");      // Angstrom sign -> Å (singleton)
  EXPECT_EQ(Nfc("\xEF\xBC\x8C"), "\xEF\xBC\x8C");  // fullwidth comma: compatibility only
}

// The table behind the shortcut must never skip a string that NFC would change.
TEST(UnicodeTest, ShortcutAgreesWithUtf8procOnRandomText) {
  const char32_t pool[] = {'a',    'e',    'A',     ' ',    0xE9,   0x301,  0x308,  0x323,  0x1100,
                           0x1161, 0x11A8, 0xAC00,  0xD55C, 0x4E2D, 0x3042, 0x304B, 0x3099, 0x309A,
                           0x212B, 0xF900, 0x2F800, 0xB47,  0xB3E,  0xB57,  0x915,  0x93C,  0x1F600,
                           0x5D0,  0x5B4,  0xFB1D,  0x344,  0xFF0C, 0x0CC6, 0x0CD5};
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) {
    std::string text;
    const int n = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int k = 0; k < n; ++k) {
      char32_t c = pool[std::uniform_int_distribution<size_t>(0, std::size(pool) - 1)(rng)];
      if (std::uniform_int_distribution<int>(0, 7)(rng) == 0) {
        do {
          c = std::uniform_int_distribution<char32_t>(1, 0x2FFFF)(rng);
        } while (c >= 0xD800 && c <= 0xDFFF);
      }
      AppendUtf8(c, &text);
    }
    ASSERT_EQ(Nfc(text), UncheckedNfc(text)) << text;
  }
}

TEST(UnicodeTest, Classes) {
  EXPECT_EQ(ClassifyCodePoint('a'), CharClass::kLetter);
  EXPECT_EQ(ClassifyCodePoint(0x4E2D), CharClass::kLetter);  // 中
  EXPECT_EQ(ClassifyCodePoint(0x2B0), CharClass::kLetter);   // modifier letter (Lm)
  EXPECT_EQ(ClassifyCodePoint(0x94D), CharClass::kOther);    // virama (Mn) is no letter
  EXPECT_EQ(ClassifyCodePoint('7'), CharClass::kNumber);
  EXPECT_EQ(ClassifyCodePoint(0xBD), CharClass::kNumber);    // ½ (No)
  EXPECT_EQ(ClassifyCodePoint(0x216B), CharClass::kNumber);  // Ⅻ (Nl)
  EXPECT_EQ(ClassifyCodePoint('\r'), CharClass::kNewline);
  EXPECT_EQ(ClassifyCodePoint(0x2028), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x1C), CharClass::kOther);  // not White_Space
  EXPECT_EQ(ClassifyCodePoint(0x1F600), CharClass::kOther);
}

}  // namespace
}  // namespace qvl::text
