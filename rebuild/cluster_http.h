// The few HTTP calls clickatron-rebuild makes to the cluster, over net/'s blocking fetch:
// a request with the cluster secret and a status check. Their JSON answers (the archive's "generation" and
// "last_day", the realtime slots' "day" and "state" in /stats) are read with
// wire/archive_answers.h and wire/realtime_answers.h, which every caller of these gets. Errors
// name the server and what it answered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/host_port.h"
#include "net/http_client.h"
#include "wire/archive_answers.h"
#include "wire/realtime_answers.h"

namespace clickatron::rebuild {

// Every request below carries the cluster secret (net/secret.h) once it is set: main sets
// it from the cluster config before any call; read-only afterwards (the jobs' threads
// share it).
void SetClusterSecret(std::string secret);
// A request with the cluster secret's header (when set), for the calls that build their
// own RequestOptions (the export and late-data streams).
net::RequestOptions ClusterRequest();

struct HttpResult {
  int status = 0;
  std::string body;
};

// One request to a server; a transport failure is an error, any HTTP status is not.
Result<HttpResult> HttpCall(const net::HostPort& to, const std::string& method,
                            const std::string& path, int timeout_ms);

// The slots of a realtime shard's GET /stats. Errors: the transport error, "HTTP 500
// <first line of the body>", or "not a realtime /stats answer: <why>".
Result<std::vector<wire::RealtimeSlotFields>> ReadRealtimeSlotsOf(const net::HostPort& host, int timeout_ms);
// The slots, closed-through day and ring of a realtime shard's GET /stats; errors as above.
Result<wire::RealtimeStatsFields> ReadRealtimeStatsOf(const net::HostPort& host, int timeout_ms);

}  // namespace clickatron::rebuild
