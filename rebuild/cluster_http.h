// The few HTTP calls clickatron-rebuild makes to the cluster, over net/'s blocking fetch:
// a request with a status check, and reading string fields out of the small JSON answers
// of /stats (the archive's "generation" and "last_day", the realtime slots' "day" and
// "state"). Errors name the server and what it answered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/host_port.h"

namespace clickatron::rebuild {

struct HttpResult {
  int status = 0;
  std::string body;
};

// One request to a server; a transport failure is an error, any HTTP status is not.
Result<HttpResult> HttpCall(const net::HostPort& to, const std::string& method,
                            const std::string& path, int timeout_ms);

// Every string value of `"key": "..."` in a JSON text, in order of appearance (no
// unescaping beyond \" and \\: the fields read here are plain ASCII).
std::vector<std::string> JsonStringFields(std::string_view json, std::string_view key);

// The first 200 bytes of an answer body, on one line, for error messages.
std::string Shown(std::string_view body);

}  // namespace clickatron::rebuild
