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

std::string Shown(std::string_view body) {
  std::string out(body.substr(0, 200));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace clickatron::rebuild
