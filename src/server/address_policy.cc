#include "server/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <string>

namespace qvl {
namespace {

bool InRange(uint32_t address, uint32_t network, int prefix_bits) {
  const uint32_t mask = prefix_bits == 0 ? 0 : ~uint32_t{0} << (32 - prefix_bits);
  return (address & mask) == (network & mask);
}

constexpr uint32_t Ipv4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

// `address` in host byte order.
AddressKind ClassifyIpv4(uint32_t address) {
  if (InRange(address, Ipv4(0, 0, 0, 0), 8)) return AddressKind::kUnspecified;
  if (InRange(address, Ipv4(127, 0, 0, 0), 8)) return AddressKind::kLoopback;
  if (InRange(address, Ipv4(10, 0, 0, 0), 8) || InRange(address, Ipv4(172, 16, 0, 0), 12) ||
      InRange(address, Ipv4(192, 168, 0, 0), 16)) {
    return AddressKind::kPrivate;
  }
  if (InRange(address, Ipv4(169, 254, 0, 0), 16)) return AddressKind::kLinkLocal;
  if (InRange(address, Ipv4(100, 64, 0, 0), 10)) return AddressKind::kSharedCgnat;
  if (InRange(address, Ipv4(224, 0, 0, 0), 4)) return AddressKind::kMulticast;
  if (InRange(address, Ipv4(240, 0, 0, 0), 4) || InRange(address, Ipv4(192, 0, 0, 0), 24) ||
      InRange(address, Ipv4(198, 18, 0, 0), 15)) {
    return AddressKind::kReserved;
  }
  return AddressKind::kPublic;
}

uint32_t ReadIpv4(const uint8_t* bytes) {
  return uint32_t{bytes[0]} << 24 | uint32_t{bytes[1]} << 16 | uint32_t{bytes[2]} << 8 |
         uint32_t{bytes[3]};
}

AddressKind ClassifyIpv6(const uint8_t* b) {
  bool first10_zero = true;
  for (int i = 0; i < 10; ++i) first10_zero = first10_zero && b[i] == 0;
  const bool first12_zero = first10_zero && b[10] == 0 && b[11] == 0;
  const uint32_t last32 = ReadIpv4(b + 12);
  if (first12_zero) {
    if (last32 == 0) return AddressKind::kUnspecified;
    if (last32 == 1) return AddressKind::kLoopback;
    return ClassifyIpv4(last32);  // IPv4-compatible (deprecated, still routable by some stacks)
  }
  if (first10_zero && b[10] == 0xff && b[11] == 0xff) return ClassifyIpv4(last32);  // mapped
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  bool nat64 = true;
  for (int i = 0; i < 12; ++i) nat64 = nat64 && b[i] == kNat64[i];
  if (nat64) return ClassifyIpv4(last32);
  if (b[0] == 0xff) return AddressKind::kMulticast;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressKind::kLinkLocal;
  if ((b[0] & 0xfe) == 0xfc) return AddressKind::kPrivate;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressKind::kPrivate;  // site-local
  // Global unicast is 2000::/3; 6to4 (2002::/16) and Teredo (2001::/32) tunnel to
  // addresses we cannot vet, documentation (2001:db8::/32) is never real.
  if ((b[0] & 0xe0) != 0x20) return AddressKind::kReserved;
  if (b[0] == 0x20 && b[1] == 0x02) return AddressKind::kReserved;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) return AddressKind::kReserved;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return AddressKind::kReserved;
  return AddressKind::kPublic;
}

}  // namespace

const char* AddressKindName(AddressKind kind) {
  switch (kind) {
    case AddressKind::kPublic:
      return "public";
    case AddressKind::kLoopback:
      return "loopback";
    case AddressKind::kPrivate:
      return "private";
    case AddressKind::kLinkLocal:
      return "link-local";
    case AddressKind::kSharedCgnat:
      return "shared (carrier-grade NAT)";
    case AddressKind::kUnspecified:
      return "unspecified";
    case AddressKind::kMulticast:
      return "multicast";
    case AddressKind::kReserved:
      return "reserved";
  }
  return "reserved";
}

AddressKind ClassifyAddress(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    return ClassifyIpv4(ntohl(v4->sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    return ClassifyIpv6(v6->sin6_addr.s6_addr);
  }
  return AddressKind::kReserved;
}

AddressKind ClassifyAddress(std::string_view text) {
  const std::string s(text);
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) return ClassifyIpv4(ntohl(v4.s_addr));
  in6_addr v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) return ClassifyIpv6(v6.s6_addr);
  return AddressKind::kReserved;
}

}  // namespace qvl
