#include "config/server_limits.h"

#include <string>

namespace clickatron::config {

ServerLimitFlags::ServerLimitFlags(const net::ServerLimits& d)
    : max_connections_(static_cast<int64_t>(d.max_connections)),
      request_timeout_ms_(d.request_timeout_ms),
      idle_timeout_ms_(d.idle_timeout_ms),
      max_inflight_body_mb_(static_cast<int64_t>(d.max_inflight_body_bytes >> 20)) {}

void ServerLimitFlags::AddTo(OptionLoader* loader) {
  loader->Add()
      ("max-connections", po::value(&max_connections_)->default_value(max_connections_),
       "open connections; one more is answered 503 TOO_MANY_CONNECTIONS and closed")
      ("request-timeout-ms", po::value(&request_timeout_ms_)->default_value(request_timeout_ms_),
       "a request's headers and body must all arrive within this many ms of its first byte, "
       "else 408 and the connection is closed")
      ("idle-timeout-ms", po::value(&idle_timeout_ms_)->default_value(idle_timeout_ms_),
       "a connection with no byte read or written for this many ms is closed")
      ("max-inflight-body-mb", po::value(&max_inflight_body_mb_)->default_value(max_inflight_body_mb_),
       "MiB of requests being received, all connections together; beyond it a request gets "
       "503 BODY_BUDGET_EXCEEDED and its connection is closed");
}

namespace {

Status Range(const char* flag, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return Status::OK();
  return Status::Error(std::string("--") + flag + " must be between " + std::to_string(low) +
                       " and " + std::to_string(high) + ", got " + std::to_string(value));
}

}  // namespace

Status ServerLimitFlags::Apply(net::ServerLimits* limits) const {
  if (Status s = Range("max-connections", max_connections_, 1, 1 << 20); !s.ok()) return s;
  if (Status s = Range("request-timeout-ms", request_timeout_ms_, 1, 3600 * 1000); !s.ok()) return s;
  if (Status s = Range("idle-timeout-ms", idle_timeout_ms_, 1, 24 * 3600 * 1000); !s.ok()) return s;
  if (Status s = Range("max-inflight-body-mb", max_inflight_body_mb_, 1, 1 << 20); !s.ok()) return s;
  limits->max_connections = static_cast<size_t>(max_connections_);
  limits->request_timeout_ms = request_timeout_ms_;
  limits->idle_timeout_ms = idle_timeout_ms_;
  limits->max_inflight_body_bytes = static_cast<size_t>(max_inflight_body_mb_) << 20;
  return Status::OK();
}

}  // namespace clickatron::config
