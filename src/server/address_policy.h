// Which network addresses an image URL may lead to. Fetching on behalf of a client must
// not become a way into the operator's own network (server-side request forgery), so
// every address a connection is about to use — after DNS and after each redirect — is
// classified, and only public ones are allowed unless the operator says otherwise.
#pragma once

#include <sys/socket.h>

#include <string_view>

namespace qvl {

enum class AddressKind {
  kPublic,
  kLoopback,     // 127.0.0.0/8, ::1
  kPrivate,      // 10/8, 172.16/12, 192.168/16, fc00::/7
  kLinkLocal,    // 169.254/16 (cloud metadata services live here), fe80::/10
  kSharedCgnat,  // 100.64/10
  kUnspecified,  // 0.0.0.0/8, ::
  kMulticast,    // 224/4, ff00::/8
  kReserved,     // 240/4 and broadcast, 192.0.0/24, 198.18/15, other special IPv6 ranges
};

// "public", "loopback", "private", "link-local", ... for error messages.
const char* AddressKindName(AddressKind kind);

// Classifies an AF_INET or AF_INET6 address; IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
// and NAT64 (64:ff9b::/96) IPv6 addresses are classified by the IPv4 address they carry.
// Other families are kReserved.
AddressKind ClassifyAddress(const sockaddr* address);

// Parses a numeric IPv4 or IPv6 address and classifies it; kReserved if it does not parse.
AddressKind ClassifyAddress(std::string_view text);

}  // namespace qvl
