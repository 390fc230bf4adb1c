// Server: an evhttp server with N event loops, routing, request limits, latency stats and
// clean shutdown on SIGTERM/SIGINT.
//
// Each loop is one thread with its own event_base and evhttp; all loops accept on one
// address (SO_REUSEPORT sockets when threads > 1, so the kernel spreads connections; with
// one thread the socket is exclusive, so a second server on the same port fails with
// "address already in use"). Handlers run on the loop that read the request; see
// request.h for what they get and how they reply.
//
// Routing is by exact path ("/get"); a route added with trailing_slash_alias also answers
// "/get/" (sortdb compatibility), one added with prefix every path it begins (static
// files under "/ui/"); routes are tried in the order they were added. Paths are matched as sent, before percent-decoding. An
// unknown path gets 404 "not found".
//
// Limits (ServerOptions, docs/net.md#limits): a request target (path and query) longer
// than max_url_bytes gets 414; header lines over max_header_bytes (evhttp counts the
// request line in there too, so its limit is set to max_url_bytes + max_header_bytes) get
// evhttp's 400, and bodies over max_body_bytes its 413, before any handler runs. The
// per-client cost limits (ServerLimits) are enforced on every connection:
//   * max_connections: a connection beyond it is accepted, answered
//     "503 Service Unavailable" (TOO_MANY_CONNECTIONS) and closed at once;
//   * request_timeout_ms: from the first byte of a request to the last byte of its body;
//     a request not complete by then gets "408 Request Timeout" and its connection is
//     closed, however steadily its bytes trickle in;
//   * idle_timeout_ms: a connection with no byte read or written for this long is closed
//     (evhttp's inactivity timer: idle keep-alive connections, stalled readers);
//   * max_inflight_body_bytes: the bytes of requests being received (not yet handed to a
//     handler), summed over every connection of the server; a request whose bytes would
//     go beyond it gets "503 Service Unavailable" (BODY_BUDGET_EXCEEDED) and its
//     connection is closed;
//   * accept errors (EMFILE, ENFILE, ENOBUFS...) pause that loop's accepting for
//     accept_backoff_ms instead of retrying in a busy loop.
// Counters of all of these are in Stats() / WriteLimitFields() for /stats.
// Keep-alive and pipelined requests work as evhttp provides (requests on one connection
// are answered in order, one at a time).
//
// Lifecycle:
//   Server server(options);
//   server.Handle("/get", OnGet, {.trailing_slash_alias = true});
//   Status s = server.Listen();     // binds; port() is known (options.port 0 = any free)
//   server.Run();                   // blocks until SIGTERM/SIGINT or Stop()
// Run() runs loop 0 on the calling thread and loops 1..N-1 on threads it starts and joins.
// When it returns every connection is closed, every pending AsyncReply abandoned (its
// OnClose run) and every evhttp object freed. The event_bases live until ~Server, so
// events a component created on base(0) (timers, LoopWaker, HttpClient) must be destroyed
// before the Server.
//
// Signals (when handle_signals): SIGTERM and SIGINT stop the server; SIGHUP runs the
// OnSighup callback on loop 0; SIGPIPE is ignored (a client closing mid-reply must not
// kill the process). Only one Server per process may handle signals.
#ifndef CLICKATRON_NET_HTTP_SERVER_H_
#define CLICKATRON_NET_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/latency.h"
#include "base/status.h"
#include "net/json.h"
#include "net/request.h"

struct event_base;

namespace clickatron::net {

class StatsWriter;

// The per-client cost limits (see above). Every server's main sets them from the flags of
// config/server_limits.h.
struct ServerLimits {
  size_t max_connections = 1024;             // open connections, all loops together
  int64_t request_timeout_ms = 30 * 1000;    // whole request (headers and body)
  int64_t idle_timeout_ms = 60 * 1000;       // no byte either way for this long
  size_t max_inflight_body_bytes = 64u << 20;  // requests being received, all connections
  int64_t accept_backoff_ms = 100;           // accepting paused after an accept error
};

// What the limits did since the server started (all loops).
struct LimitStats {
  uint64_t open_connections = 0;
  uint64_t accepted_connections = 0;
  uint64_t refused_connections = 0;  // beyond max_connections
  uint64_t request_timeouts = 0;     // cut at request_timeout_ms
  uint64_t budget_refusals = 0;      // cut by max_inflight_body_bytes
  uint64_t inflight_body_bytes = 0;  // now
  uint64_t accept_errors = 0;        // each one paused accepting
  uint64_t secret_missing = 0;       // guarded requests refused 401 SECRET_MISSING (net/secret.h)
  uint64_t secret_wrong = 0;         // guarded requests refused 403 SECRET_WRONG
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;                       // 0: any free port (see port())
  int threads = 1;                         // event loops, >= 1
  size_t max_url_bytes = 8 * 1024;         // longer request target: 414
  size_t max_header_bytes = 16 * 1024;     // all header lines together
  size_t max_body_bytes = 1024 * 1024;     // larger bodies: 413
  ServerLimits limits;
  bool handle_signals = true;              // SIGTERM/SIGINT/SIGHUP as described above
  bool log_requests = false;               // one stderr line per request (debugging)
};

using Handler = std::function<void(Request&)>;

struct RouteOptions {
  bool trailing_slash_alias = false;  // "/get" also answers "/get/"
  bool prefix = false;                // "/ui/" answers every path starting with "/ui/"
};

// Latency of one route, merged over all loops.
struct RouteLatency {
  std::string path;
  LatencySnapshot latency;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Adds a route. REQUIRES: before Listen(); path starts with '/'; not added twice.
  void Handle(std::string path, Handler handler, RouteOptions options = {});
  // fn runs on loop 0 on every SIGHUP (e.g. reopen the data file). REQUIRES: before Run().
  void OnSighup(std::function<void()> fn);
  // fn runs on loop 0 once a stop is requested (signal or Stop()), before the loops
  // exit: the last moment to use the loops (e.g. flush). REQUIRES: before Run().
  void OnStop(std::function<void()> fn);

  // Creates the loops and binds the listening sockets. Errors name the address and cause
  // ("127.0.0.1:7201: Address already in use"). REQUIRES: called once.
  Status Listen();
  // The bound port (the real one when options.port was 0). REQUIRES: Listen() succeeded.
  uint16_t port() const { return port_; }
  // Loop i's event_base, for a component's own events. REQUIRES: Listen() succeeded.
  event_base* base(int i = 0) const;
  int threads() const { return options_.threads; }
  const ServerOptions& options() const { return options_; }

  // Serves until stopped; see the lifecycle above. REQUIRES: Listen() succeeded; once.
  void Run();
  // Asks Run() to return. Thread-safe (not async-signal-safe); idempotent; may be called
  // from a handler, another thread, or before Run() (Run then returns at once).
  void Stop();
  // Simulates a SIGHUP: runs the OnSighup callback on loop 0. Thread-safe.
  void TriggerSighup();

  // Per-route latency (request read to reply handed to evhttp), merged over loops, in
  // route order; a route's "/x/" alias counts as "/x". Any thread.
  std::vector<RouteLatency> Latency() const;
  // Writes {"/get": {"count": n, "p50_us": .., "p99_us": .., "p999_us": .., "max_us": ..},
  // ...} (routes with no requests included, count 0) as one JSON value; with a registry,
  // each route's histogram as clickatron_http_request_duration_seconds{path="/get"}.
  void WriteLatencyJson(StatsWriter* w) const;

  // The limits' counters, summed over loops. Any thread.
  LimitStats Stats() const;
  // Counts a request refused for the cluster secret (net/secret.cc, on a loop thread).
  void CountSecretRefusal(bool wrong_secret);
  // Writes the limits (max_connections, request_timeout_ms, idle_timeout_ms, max_body_bytes,
  // max_inflight_body_bytes) and the counters of Stats() (secret refusals included) as fields of the object the
  // caller has open, for its /stats; with a registry, as the clickatron_http_* metrics
  // (docs/operations.md#metric-names).
  void WriteLimitFields(StatsWriter* w) const;

 private:
  friend class ServerLoop;
  struct Route {
    std::string path;
    Handler handler;
    RouteOptions options;
  };
  void StopFromLoop();

  ServerOptions options_;
  std::vector<Route> routes_;
  std::function<void()> on_sighup_;
  std::function<void()> on_stop_;
  std::vector<std::unique_ptr<ServerLoop>> loops_;
  uint16_t port_ = 0;
  bool listening_ = false;
  struct Signals;
  std::unique_ptr<Signals> signals_;
  struct Counters;
  std::unique_ptr<Counters> counters_;  // shared by the loops
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_HTTP_SERVER_H_
