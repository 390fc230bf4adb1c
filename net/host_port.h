// HostPort: a server address from a config string, "host:port".
//
// Config files name servers as `127.0.0.1:7101` (docs/formats.md#cluster-config). The host is an IPv4 literal or a
// DNS name (letters, digits, '-', '.'); a DNS name is resolved by the OS resolver when a
// connection is made (blocking, once per new connection), so config files should prefer
// IPv4 literals. The port is 1..65535. IPv6 literals are not accepted.
#ifndef CLICKATRON_NET_HOST_PORT_H_
#define CLICKATRON_NET_HOST_PORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::net {

struct HostPort {
  std::string host;
  uint16_t port = 0;

  // "host:port".
  std::string ToString() const;
  bool operator==(const HostPort&) const = default;
};

// Parses "host:port" (surrounding spaces ignored). On error returns a Status naming the
// problem ("'abc' is not host:port", "port '70000' is out of range 1..65535") and leaves
// *out unchanged.
Status ParseHostPort(std::string_view text, HostPort* out);

// Parses a comma-separated list "h1:p1,h2:p2" (replicas of one archive shard, docs/formats.md#cluster-config).
// Empty items are errors. On error *out is unchanged.
Status ParseHostPortList(std::string_view text, std::vector<HostPort>* out);

// True iff text is a dotted-quad IPv4 literal such as "127.0.0.1".
bool IsIpv4Literal(std::string_view text);

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_HOST_PORT_H_
