// The few HTTP calls clickatron-rebuild makes to the cluster, over net/'s blocking fetch:
// a request with a status check. Their JSON answers (the archive's "generation" and
// "last_day", the realtime slots' "day" and "state" in /stats) are read with
// net/json_read.h, which every caller of these gets. Errors name the server and what it
// answered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/host_port.h"
#include "net/json_read.h"

namespace clickatron::rebuild {

struct HttpResult {
  int status = 0;
  std::string body;
};

// One request to a server; a transport failure is an error, any HTTP status is not.
Result<HttpResult> HttpCall(const net::HostPort& to, const std::string& method,
                            const std::string& path, int timeout_ms);

// The slots of a realtime shard's GET /stats. Errors: the transport error, "HTTP 500
// <first line of the body>", or "not a realtime /stats answer: <why>".
Result<std::vector<net::RealtimeSlotFields>> ReadRealtimeSlotsOf(const net::HostPort& host, int timeout_ms);

}  // namespace clickatron::rebuild
