// Server limit flags: the options every Clickatron server reads for the per-client cost
// limits of net::ServerLimits (docs/operations.md#limits), one definition for the API,
// realtime and archive mains.
//
//   --max-connections N        open connections; beyond: 503 TOO_MANY_CONNECTIONS, closed
//   --request-timeout-ms N     a whole request (headers and body) must arrive within N ms
//   --idle-timeout-ms N        a connection with no traffic for N ms is closed
//   --max-inflight-body-mb N   MiB of requests being received, all connections together
//
//   config::ServerLimitFlags flags(defaults);   // defaults: that server's net::ServerLimits
//   flags.AddTo(&loader);
//   ... loader.Load(...) ...
//   if (Status s = flags.Apply(&limits); !s.ok()) ...   // range errors name the flag
#pragma once

#include <cstdint>

#include "base/status.h"
#include "config/option_loader.h"
#include "net/http_server.h"

namespace clickatron::config {

class ServerLimitFlags {
 public:
  explicit ServerLimitFlags(const net::ServerLimits& defaults);
  // Adds the four options, with the defaults given, to loader. REQUIRES: before Load().
  void AddTo(OptionLoader* loader);
  // Checks the values read and stores them into *limits (other fields untouched).
  Status Apply(net::ServerLimits* limits) const;

 private:
  int64_t max_connections_;
  int64_t request_timeout_ms_;
  int64_t idle_timeout_ms_;
  int64_t max_inflight_body_mb_;
};

}  // namespace clickatron::config
