// HttpClient: asynchronous HTTP/1.1 requests on one event_base, with a keep-alive
// connection pool per host:port.
//
// Every request's callback is called exactly once, on the client's loop, with either an
// HTTP response (any status, 200 or not: response.error is empty) or a transport error
// (response.status == 0, response.error says what happened: "127.0.0.1:7101: connection
// refused", "127.0.0.1:7101: timeout after 2000 ms", "127.0.0.1:7101: connection closed
// before a complete response"). The client never retries: whether a request may be
// repeated is the caller's decision (an increment batch may, with its sequence number).
//
// Pooling: a request takes an idle connection to its host:port if there is one, otherwise
// opens a new one, so requests in flight to one host at once use separate connections.
// After a complete response the connection goes back to the pool (up to
// max_idle_per_host idle ones per host; extra ones are closed). A pooled connection the
// server closes is noticed while idle and leaves the pool. A response is framed by
// Content-Length, chunked encoding or (without either) the server's close; the client
// speaks HTTP/1.1 on its own sockets, not through evhttp (docs/net.md says why).
//
// Timeouts: connect_timeout_ms bounds the TCP connect of a new connection; the request's
// timeout_ms bounds the whole exchange (connect, send, response) — 0 means no limit, for
// long streams, where idle_timeout_ms (no byte for that long) still applies.
//
// Lifetime: destroying the client cancels everything in flight WITHOUT calling callbacks
// and closes every connection. REQUIRES: not destroyed from inside one of its callbacks;
// destroyed before its event_base. Callbacks may start new requests. Not thread-safe: use
// only on the loop's thread.
#ifndef CLICKATRON_NET_HTTP_CLIENT_H_
#define CLICKATRON_NET_HTTP_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/host_port.h"
#include "base/status.h"

struct event;
struct event_base;

namespace clickatron::net {

struct HttpResponse {
  int status = 0;              // HTTP status; 0 on a transport error
  std::string error;           // transport error text; empty when a response arrived
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;            // empty when streamed through on_chunk

  bool ok() const { return error.empty(); }
  // The first header called name (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

using ResponseCallback = std::function<void(HttpResponse&&)>;

struct ClientOptions {
  int connect_timeout_ms = 1000;
  int idle_timeout_ms = 30000;       // no byte sent or received for this long: timeout
  size_t max_idle_per_host = 16;
  size_t max_response_bytes = 256u << 20;  // a larger (non-streamed) body: transport error
  // Headers sent with every request, before the request's own (e.g. the cluster secret,
  // net/secret.h).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct RequestOptions {
  std::string method = "GET";        // GET, POST, HEAD, PUT or DELETE
  std::string body;                  // sent with Content-Length
  std::vector<std::pair<std::string, std::string>> headers;
  int timeout_ms = 10000;            // whole exchange; 0 = none (idle timeout still applies)
  // If set, body bytes are handed over as they arrive instead of collected in
  // response.body. Returning false aborts the request (callback: error "aborted by
  // receiver"). Runs on the loop.
  std::function<bool(std::string_view chunk)> on_chunk;
};

class HttpClient {
 public:
  HttpClient(event_base* base, ClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a request for path_and_query (e.g. "/get?key=u%7Cjehiah"; the caller encodes
  // it, see PercentEncode). The callback runs later, never from inside this call.
  void Request(const HostPort& to, std::string_view path_and_query, RequestOptions options,
               ResponseCallback callback);
  void Get(const HostPort& to, std::string_view path_and_query, int timeout_ms,
           ResponseCallback callback);
  void Post(const HostPort& to, std::string_view path_and_query, std::string body,
            int timeout_ms, ResponseCallback callback);

  // Requests started and not yet called back.
  size_t in_flight() const { return in_flight_; }
  // Idle pooled connections to a host (for tests and /stats).
  size_t idle_connections(const HostPort& to) const;
  // Connections opened so far (for tests: keep-alive reuse shows as no new connections).
  uint64_t connections_opened() const { return connections_opened_; }

 private:
  struct Pool;
  struct Conn;
  struct Call;
  friend struct Conn;
  friend struct Call;
  Pool* PoolFor(const HostPort& to);
  Status Connect(Pool* pool, Conn** out);
  Call* NewCall(const HostPort& to, RequestOptions& options, ResponseCallback callback);
  bool TakeConnection(Call* call);
  static void OnReap(int fd, short what, void* arg);

  event_base* base_;
  ClientOptions options_;
  event* reaper_;                 // frees doomed_ outside the callbacks using them
  std::vector<Conn*> doomed_;     // closed connections to free
  std::vector<std::unique_ptr<Pool>> pools_;  // one per host:port (a handful: linear search)
  Conn* conns_ = nullptr;  // open connections (busy and idle), an intrusive list
  Call* calls_ = nullptr;  // in-flight calls, an intrusive list
  size_t in_flight_ = 0;
  uint64_t connections_opened_ = 0;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_HTTP_CLIENT_H_
