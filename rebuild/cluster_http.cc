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

std::vector<std::string> JsonStringFields(std::string_view json, std::string_view key) {
  std::vector<std::string> out;
  std::string quoted(key);
  quoted.insert(quoted.begin(), '"');
  quoted.push_back('"');
  size_t pos = 0;
  while ((pos = json.find(quoted, pos)) != std::string_view::npos) {
    pos += quoted.size();
    size_t i = pos;
    while (i < json.size() && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) ++i;
    if (i >= json.size() || json[i] != ':') continue;
    ++i;
    while (i < json.size() && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) ++i;
    if (i >= json.size() || json[i] != '"') {
      out.emplace_back();  // null or a non-string: an empty value keeps the order
      continue;
    }
    std::string value;
    for (++i; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\' && i + 1 < json.size()) ++i;
      value.push_back(json[i]);
    }
    out.push_back(std::move(value));
    pos = i;
  }
  return out;
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
