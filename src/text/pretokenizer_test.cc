// The hand-written pre-tokenizer against PCRE2 running the tokenizer.json regex itself.
#include "text/pretokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "text/pcre2_pretokenizer.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace qvl::text {
namespace {

std::vector<std::string_view> ScannerPieces(std::string_view text) {
  std::vector<std::string_view> pieces;
  ForEachPiece(text, [&](std::string_view piece) { pieces.push_back(piece); });
  return pieces;
}

const Pcre2PreTokenizer& Reference() {
  static const Pcre2PreTokenizer* reference = new Pcre2PreTokenizer();
  return *reference;
}

// Code points whose class differs between utf8proc and PCRE2 because their Unicode
// versions differ (15.0 and 14.0 in Debian 12): characters new in one of them.
const std::unordered_set<char32_t>& UnicodeVersionDifferences() {
  static const auto* differences = [] {
    auto* set = new std::unordered_set<char32_t>();
    for (char32_t c = 0; c < 0x110000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      if (ClassifyCodePoint(c) != Reference().Classify(c)) set->insert(c);
    }
    return set;
  }();
  return *differences;
}

TEST(PreTokenizerTest, CharacterClassesMatchPcre2ButForNewCharacters) {
  size_t letters_or_numbers = 0;
  for (const char32_t c : UnicodeVersionDifferences()) {
    const CharClass ours = ClassifyCodePoint(c);
    const CharClass theirs = Reference().Classify(c);
    // Only a newly assigned letter or number that the other side sees as unassigned.
    const bool ours_is_new =
        theirs == CharClass::kOther && (ours == CharClass::kLetter || ours == CharClass::kNumber);
    const bool theirs_is_new =
        ours == CharClass::kOther && (theirs == CharClass::kLetter || theirs == CharClass::kNumber);
    EXPECT_TRUE(ours_is_new || theirs_is_new) << "U+" << std::hex << static_cast<uint32_t>(c);
    ++letters_or_numbers;
  }
  // Unicode 15.0 added 4,489 characters, most of them CJK ideographs.
  EXPECT_LT(letters_or_numbers, 5000u);
}

TEST(PreTokenizerTest, SpellsOutWhiteSpaceForPcre2) {
  EXPECT_EQ(Reference().Classify(0x85), CharClass::kSpace);
  EXPECT_EQ(Reference().Classify(0x180E), CharClass::kOther);  // not White_Space since 6.3
  EXPECT_EQ(ClassifyCodePoint(0x85), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x180E), CharClass::kOther);
  EXPECT_EQ(ClassifyCodePoint(0x3000), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x200B), CharClass::kOther);  // zero width space is Cf
  EXPECT_EQ(ClassifyCodePoint(0xFEFF), CharClass::kOther);
}

TEST(PreTokenizerTest, KnownSplits) {
  using Pieces = std::vector<std::string_view>;
  EXPECT_EQ(ScannerPieces("Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
  EXPECT_EQ(ScannerPieces("   leading"), (Pieces{"  ", " leading"}));
  EXPECT_EQ(ScannerPieces("trailing   "), (Pieces{"trailing", "   "}));
  EXPECT_EQ(ScannerPieces("I'm sure they'LL see"),
            (Pieces{"I", "'m", " sure", " they", "'LL", " see"}));
  EXPECT_EQ(ScannerPieces("'sup"), (Pieces{"'s", "up"}));
  EXPECT_EQ(ScannerPieces("it\xC5\xBF"), (Pieces{"it\xC5\xBF"}));
  EXPECT_EQ(ScannerPieces("'\xC5\xBF"), (Pieces{"'\xC5\xBF"}));  // long s folds to s
  EXPECT_EQ(ScannerPieces("2024"), (Pieces{"2", "0", "2", "4"}));
  EXPECT_EQ(ScannerPieces("a\n\n  b"), (Pieces{"a", "\n\n", " ", " b"}));
  EXPECT_EQ(ScannerPieces("x = (y);\r\n"), (Pieces{"x", " =", " (", "y", ");\r\n"}));
  EXPECT_EQ(ScannerPieces("\t\tx"), (Pieces{"\t", "\tx"}));
  EXPECT_EQ(ScannerPieces(" \xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C"),
            (Pieces{" \xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C"}));
  EXPECT_EQ(ScannerPieces(""), Pieces{});
  for (const std::string_view text : {"Hello, world!", "   leading", "I'm sure they'LL see", "'sup",
                                      "'\xC5\xBF", "a\n\n  b", "x = (y);\r\n"}) {
    EXPECT_EQ(ScannerPieces(text), Reference().Split(text)) << text;
  }
}

// Random strings over characters chosen to hit every branch of the regex: each class,
// contractions in both cases, every kind of space and newline, combining marks,
// numbers of every category, emoji, unassigned and private-use code points.
class RandomText {
 public:
  explicit RandomText(uint32_t seed) : rng_(seed) {
    const char32_t interesting[] = {
        '\'',   's',    'S',    't',    'T',    'r',    'R',    'e',      'E',    'v',     'V',
        'm',    'M',    'l',    'L',    'd',    'D',    'a',    'z',      'Q',    '0',     '7',
        ' ',    ' ',    ' ',    '\t',   '\n',   '\n',   '\r',   '\v',     '\f',   '.',     ',',
        '!',    '(',    ')',    '{',    '"',    '#',    '_',    '-',      0x1C,   0x00,    0x7F,
        0x017F,  // long s
        0x212A,  // Kelvin sign
        0x85,   0xA0,   0x1680, 0x2000, 0x2009, 0x200A, 0x2028, 0x2029,   0x202F, 0x205F,  0x3000,
        0x180E, 0x200B, 0x200D, 0xFEFF, 0xE9,   0xDF,   0x1C5,  0x2B0,    0x4E2D, 0x6587,  0x3042,
        0x30A2, 0xD55C, 0x416,  0x3B1,  0x5D0,  0x639,  0x915,  0x94D,    0x93E,  0xE44,   0xE31,
        0x301,  0x20E3, 0x663,  0xB2,   0xBD,   0x216B, 0x2460, 0x1D7D9,  0xFF11, 0x1F600, 0x1F3FB,
        0xA9,   0x20AC, 0x3002, 0xFF0C, 0x201C, 0xE000, 0x378,  0x10FFFF,
    };
    pool_.assign(std::begin(interesting), std::end(interesting));
  }

  std::string Next(size_t max_chars) {
    std::string text;
    const size_t n = std::uniform_int_distribution<size_t>(0, max_chars)(rng_);
    for (size_t i = 0; i < n; ++i) AppendUtf8(NextChar(), &text);
    return text;
  }

 private:
  char32_t NextChar() {
    if (std::uniform_int_distribution<int>(0, 9)(rng_) > 0) {
      return pool_[std::uniform_int_distribution<size_t>(0, pool_.size() - 1)(rng_)];
    }
    while (true) {
      const auto c =
          static_cast<char32_t>(std::uniform_int_distribution<uint32_t>(0, 0x10FFFF)(rng_));
      if ((c < 0xD800 || c > 0xDFFF) && !UnicodeVersionDifferences().contains(c)) return c;
    }
  }

  std::mt19937 rng_;
  std::vector<char32_t> pool_;
};

TEST(PreTokenizerTest, EqualsRegexOnRandomText) {
  RandomText random(20240611);
  for (int i = 0; i < 50000; ++i) {
    const std::string text = random.Next(i % 2 == 0 ? 8 : 40);
    ASSERT_EQ(ScannerPieces(text), Reference().Split(text)) << "text: " << text;
  }
}

TEST(PreTokenizerTest, EqualsRegexOnLongRuns) {
  std::vector<std::string> texts = {
      std::string(10000, ' ') + "x",
      std::string(10000, ' ') + "\n" + std::string(10000, ' ') + "!",
      std::string(5000, '\'') + "s",
      std::string(20000, 'a'),
      std::string(3000, '\n') + std::string(3000, '\r'),
  };
  std::string mixed;
  for (int i = 0; i < 2000; ++i)
    mixed +=
        " \n\t'll\xE3\x80\x80"
        "9";
  texts.push_back(mixed);
  for (const std::string& text : texts) {
    ASSERT_EQ(ScannerPieces(text), Reference().Split(text)) << "text of " << text.size();
  }
}

TEST(PreTokenizerTest, IllFormedBytesAreSingleCharacters) {
  // Encode replaces ill-formed input first; the scanner still must not stall on it.
  const std::string text = "ab\xFF\xFE cd\xE4";
  std::string joined;
  for (const std::string_view piece : ScannerPieces(text)) joined.append(piece);
  EXPECT_EQ(joined, text);
}

}  // namespace
}  // namespace qvl::text
