#include "server/base64.h"

#include <gtest/gtest.h>

#include <string>

#include "base/field_error.h"

namespace qvl {
namespace {

std::string Decode(std::string_view text) {
  const std::vector<uint8_t> bytes = DecodeBase64(text, "f");
  return std::string(bytes.begin(), bytes.end());
}

std::string ErrorOf(std::string_view text) {
  try {
    DecodeBase64(text, "messages[0].content[0].image_url.url");
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.field(), "messages[0].content[0].image_url.url");
    return e.what();
  }
  return "no error";
}

TEST(Base64Test, DecodesRfc4648Vectors) {
  EXPECT_EQ(Decode("Zg=="), "f");
  EXPECT_EQ(Decode("Zm8="), "fo");
  EXPECT_EQ(Decode("Zm9v"), "foo");
  EXPECT_EQ(Decode("Zm9vYg=="), "foob");
  EXPECT_EQ(Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(Decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(Decode("+/+/"), "\xfb\xff\xbf");
}

TEST(Base64Test, EncodesRfc4648VectorsAndRoundTrips) {
  auto encode = [](std::string_view text) {
    return EncodeBase64({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  };
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(encode("\xfb\xff\xbf"), "+/+/");
  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  EXPECT_EQ(Decode(encode(every_byte)), every_byte);
}

TEST(Base64Test, DecodedSizeMatchesWithoutDecoding) {
  EXPECT_EQ(Base64DecodedSize("Zg=="), 1u);
  EXPECT_EQ(Base64DecodedSize("Zm8="), 2u);
  EXPECT_EQ(Base64DecodedSize("Zm9vYmFy"), 6u);
  EXPECT_EQ(Base64DecodedSize(""), 0u);
}

// MIME's wrapped base64 (CRLF or LF every 76 characters, a final line break) is the data
// without its line breaks.
TEST(Base64Test, LineBreaksAreSkipped) {
  for (const std::string text : {"Zm9v\nYmFy", "Zm9v\r\nYmFy\r\n", "Zm\n9vYm\nFy\n"}) {
    EXPECT_EQ(Decode(text), "foobar") << text;
    EXPECT_EQ(Base64DecodedSize(text), 6u) << text;
  }
  EXPECT_EQ(Base64DecodedSize("Zm8=\n"), 2u);
  EXPECT_EQ(Base64DecodedSize("Zg\n==\n"), 1u);
}

TEST(Base64Test, RefusesMalformedInputNamingTheProblem) {
  EXPECT_EQ(ErrorOf(""), "messages[0].content[0].image_url.url: the base64 data is empty");
  EXPECT_EQ(ErrorOf("Zm9vY"),
            "messages[0].content[0].image_url.url: invalid base64: length 5 is not a multiple "
            "of 4 (missing '=' padding or truncated data?)");
  EXPECT_EQ(ErrorOf("Zm9v\nYmE"),
            "messages[0].content[0].image_url.url: invalid base64: length 7 is not a multiple "
            "of 4 (missing '=' padding or truncated data?)");
  EXPECT_EQ(ErrorOf("Zm9v YmE"),
            "messages[0].content[0].image_url.url: invalid base64: character ' ' (space) at "
            "offset 4");
  EXPECT_EQ(ErrorOf("Zm9-"),
            "messages[0].content[0].image_url.url: invalid base64: character '-' at offset 3");
  EXPECT_EQ(ErrorOf("Zg==Zm8="),
            "messages[0].content[0].image_url.url: invalid base64: '=' at offset 2 before the "
            "end of the data");
  EXPECT_EQ(ErrorOf("Z==="),
            "messages[0].content[0].image_url.url: invalid base64: '=' at offset 1 before the "
            "end of the data");
  EXPECT_EQ(ErrorOf(std::string("Zm9\xff", 4)),
            "messages[0].content[0].image_url.url: invalid base64: character byte 0xff at "
            "offset 3");
}

}  // namespace
}  // namespace qvl
