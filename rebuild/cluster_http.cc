#include "rebuild/cluster_http.h"

#include "net/fetch.h"

namespace clickatron::rebuild {

Result<HttpResult> HttpCall(const net::HostPort& to, const std::string& method,
                            const std::string& path, int timeout_ms) {
  net::RequestOptions request;
  request.method = method;
  request.timeout_ms = timeout_ms;
  net::HttpResponse response;
  clickatron::Status s = net::Fetch(to, path, request, &response);
  if (!s.ok()) return Status::Error(method + " " + path + " to " + to.ToString() + ": " + s.message());
  return HttpResult{response.status, std::move(response.body)};
}

}  // namespace clickatron::rebuild
