#include "rebuild/cluster_http.h"

#include "base/clip.h"
#include "net/fetch.h"
#include "net/secret.h"
#include "wire/headers.h"

namespace clickatron::rebuild {

namespace {
std::string& Secret() {
  static std::string secret;
  return secret;
}
}  // namespace

void SetClusterSecret(std::string secret) { Secret() = std::move(secret); }

net::RequestOptions ClusterRequest() {
  net::RequestOptions request;
  if (!Secret().empty()) request.headers.emplace_back(wire::kSecretHeader, Secret());
  return request;
}

Result<HttpResult> HttpCall(const net::HostPort& to, const std::string& method,
                            const std::string& path, int timeout_ms) {
  net::RequestOptions request = ClusterRequest();
  request.method = method;
  request.timeout_ms = timeout_ms;
  net::HttpResponse response;
  clickatron::Status s = net::Fetch(to, path, request, &response);
  if (!s.ok()) return Status::Error(method + " " + path + " to " + to.ToString() + ": " + s.message());
  return HttpResult{response.status, std::move(response.body)};
}

Result<wire::RealtimeStatsFields> ReadRealtimeStatsOf(const net::HostPort& host, int timeout_ms) {
  Result<HttpResult> r = HttpCall(host, "GET", "/stats", timeout_ms);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return Status::Error("HTTP " + std::to_string(r->status) + " " + ClippedLine(r->body, 200));
  }
  Result<wire::RealtimeStatsFields> stats = wire::ReadRealtimeStats(r->body);
  if (!stats.ok()) return Status::Error("not a realtime /stats answer: " + stats.status().message());
  return stats;
}

Result<std::vector<wire::RealtimeSlotFields>> ReadRealtimeSlotsOf(const net::HostPort& host, int timeout_ms) {
  Result<wire::RealtimeStatsFields> stats = ReadRealtimeStatsOf(host, timeout_ms);
  if (!stats.ok()) return stats.status();
  return std::move(stats).value().slots;
}

}  // namespace clickatron::rebuild
