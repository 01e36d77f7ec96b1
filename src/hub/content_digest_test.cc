#include "hub/content_digest.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "hub/test_folder.h"

namespace qvl::hub {
namespace {

TEST(ContentDigestTest, Sha256MatchesKnownVector) {
  EXPECT_EQ(DigestOf(DigestKind::kSha256, "abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ContentDigestTest, GitBlobSha1MatchesGitHashObject) {
  // `printf 'hello\n' | git hash-object --stdin` and the empty blob.
  EXPECT_EQ(DigestOf(DigestKind::kGitBlobSha1, "hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(DigestOf(DigestKind::kGitBlobSha1, ""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST(ContentDigestTest, KindFollowsEtagShape) {
  EXPECT_EQ(DigestKindOfEtag(std::string(64, 'a')), DigestKind::kSha256);
  EXPECT_EQ(DigestKindOfEtag(std::string(40, '0')), DigestKind::kGitBlobSha1);
  // Mirrors and proxies rewrite ETags in upper case; the digest is the same.
  EXPECT_EQ(DigestKindOfEtag(std::string(40, 'A')), DigestKind::kGitBlobSha1);
  EXPECT_EQ(DigestKindOfEtag(std::string(64, 'F')), DigestKind::kSha256);
  EXPECT_EQ(DigestKindOfEtag(std::string(40, 'g')), DigestKind::kNone);
  EXPECT_TRUE(DigestMatchesEtag("ce013625030ba8dba906f756967f9e9ca394464a",
                                "CE013625030BA8DBA906F756967F9E9CA394464A"));
  EXPECT_FALSE(DigestMatchesEtag("ce013625030ba8dba906f756967f9e9ca394464a",
                                 "CE013625030BA8DBA906F756967F9E9CA394464B"));
  EXPECT_EQ(DigestKindOfEtag("abc-123"), DigestKind::kNone);
}

TEST(ContentDigestTest, FileDigestEqualsMemoryDigest) {
  testing::TestFolder folder;
  std::string content(5 << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131 % 251);
  std::ofstream(folder / "blob", std::ios::binary) << content;
  EXPECT_EQ(DigestOfFile(DigestKind::kSha256, folder / "blob", content.size()),
            DigestOf(DigestKind::kSha256, content));
  EXPECT_EQ(DigestOfFile(DigestKind::kGitBlobSha1, folder / "blob", content.size()),
            DigestOf(DigestKind::kGitBlobSha1, content));
  EXPECT_THROW(DigestOfFile(DigestKind::kSha256, folder / "blob", content.size() + 1), Error);
}

}  // namespace
}  // namespace qvl::hub
