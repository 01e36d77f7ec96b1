#include "server/address_policy.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(AddressPolicyTest, ClassifiesIpv4) {
  EXPECT_EQ(ClassifyAddress("8.8.8.8"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("93.184.216.34"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("127.0.0.1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("127.255.1.2"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("10.1.2.3"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("172.16.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("172.31.255.255"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("172.32.0.1"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("192.168.1.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("169.254.169.254"), AddressKind::kLinkLocal);
  EXPECT_EQ(ClassifyAddress("100.64.0.1"), AddressKind::kSharedCgnat);
  EXPECT_EQ(ClassifyAddress("100.128.0.1"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("0.0.0.0"), AddressKind::kUnspecified);
  EXPECT_EQ(ClassifyAddress("224.0.0.251"), AddressKind::kMulticast);
  EXPECT_EQ(ClassifyAddress("255.255.255.255"), AddressKind::kReserved);
  EXPECT_EQ(ClassifyAddress("198.18.0.1"), AddressKind::kReserved);
}

TEST(AddressPolicyTest, ClassifiesIpv6AndEmbeddedIpv4) {
  EXPECT_EQ(ClassifyAddress("2606:4700::1111"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("::1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("::"), AddressKind::kUnspecified);
  EXPECT_EQ(ClassifyAddress("fe80::1"), AddressKind::kLinkLocal);
  EXPECT_EQ(ClassifyAddress("fd00::1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("ff02::1"), AddressKind::kMulticast);
  EXPECT_EQ(ClassifyAddress("::ffff:127.0.0.1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("::ffff:169.254.169.254"), AddressKind::kLinkLocal);
  EXPECT_EQ(ClassifyAddress("::ffff:8.8.8.8"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("64:ff9b::10.0.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("::10.0.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("2001:db8::1"), AddressKind::kReserved);
  EXPECT_EQ(ClassifyAddress("2002:7f00:1::1"), AddressKind::kReserved);
}

TEST(AddressPolicyTest, UnparsableIsNotPublic) {
  EXPECT_EQ(ClassifyAddress("localhost"), AddressKind::kReserved);
  EXPECT_EQ(ClassifyAddress("1.2.3"), AddressKind::kReserved);
  EXPECT_STREQ(AddressKindName(AddressKind::kLinkLocal), "link-local");
}

}  // namespace
}  // namespace qvl
