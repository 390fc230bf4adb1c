// Blocking HTTP for command-line tools (clickatron-rebuild): one request on a private
// event loop, returning when it is complete.
//
//   HttpResponse r;
//   Status s = Fetch("127.0.0.1:7101", "/ping", {}, &r);   // s: transport error or ok
//   if (s.ok() && r.status == 200) ...
//
//   // an export of a day can be GBs: write it to a file as it arrives
//   Status s = FetchStream("127.0.0.1:7101", "/export?day=2012-03-25", options,
//                          [&](std::string_view chunk) { return out.Write(chunk); },
//                          &r);
//
// Thread-safe (each call has its own loop). Never retries.
#ifndef CLICKATRON_NET_FETCH_H_
#define CLICKATRON_NET_FETCH_H_

#include <functional>
#include <string_view>

#include "net/host_port.h"
#include "net/http_client.h"
#include "base/status.h"

namespace clickatron::net {

// Performs one request and fills *response (status, headers, body). Returns a transport
// error (connection refused, timeout, bad address) as a non-ok Status, also copied into
// response->error; an HTTP error status is NOT a failed Status — check response->status.
Status Fetch(const HostPort& to, std::string_view path_and_query,
             RequestOptions options, HttpResponse* response,
             ClientOptions client_options = {});
// The same with a "host:port" string (parse errors are returned as Status).
Status Fetch(std::string_view host_port, std::string_view path_and_query,
             RequestOptions options, HttpResponse* response,
             ClientOptions client_options = {});

// Streams the body to on_chunk as it arrives (response->body stays empty). on_chunk
// returning false aborts with "aborted by receiver". options.timeout_ms bounds the whole
// transfer as for Fetch; pass 0 for an export of unknown size (the client's
// idle_timeout_ms still ends a stalled one). The status and headers are in *response
// when it returns.
Status FetchStream(const HostPort& to, std::string_view path_and_query,
                   RequestOptions options,
                   std::function<bool(std::string_view chunk)> on_chunk,
                   HttpResponse* response, ClientOptions client_options = {});

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_FETCH_H_
