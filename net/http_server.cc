#include "net/http_server.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "base/errno_status.h"
#include "base/latency.h"
#include "base/unique_fd.h"
#include "net/loop_waker.h"
#include "net/request.h"
#include "net/server_loop.h"
#include "net/stats_writer.h"

namespace clickatron::net {

// Shared by the loops; relaxed: they count, they order nothing.
struct Server::Counters {
  std::atomic<uint64_t> open{0}, accepted{0}, refused{0}, timeouts{0}, budget_refusals{0};
  std::atomic<uint64_t> inflight{0}, accept_errors{0}, secret_missing{0}, secret_wrong{0};
};

namespace {

// Opens a listening socket on address:port. reuse_port lets the other loops of the same
// server bind the same port (the kernel then spreads connections over them).
Status OpenListener(const std::string& address, uint16_t port, bool reuse_port, int* fd_out,
                    uint16_t* bound_port) {
  std::string where = address + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(port);
  int rc = getaddrinfo(address.c_str(), port_text.c_str(), &hints, &found);
  if (rc != 0) return Status::Error(where + ": " + gai_strerror(rc));
  UniqueFd listener(socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener.valid()) {
    const int err = errno;
    freeaddrinfo(found);
    return ErrnoStatus(err, where + ": socket");
  }
  const int fd = listener.get();
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  // Accepted sockets inherit TCP_NODELAY on Linux. Without it a reply written as headers
  // then body stalls ~40 ms on a kept-alive connection (Nagle + delayed ACK), which the
  // API's /breakdown measured against realtime /fwmatch (docs/benchmarks.md).
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
    int err = errno;
    freeaddrinfo(found);
    return ErrnoStatus(err, where);
  }
  freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *bound_port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  *fd_out = listener.release();
  return Status::OK();
}

bool RouteMatches(const std::string& route, const RouteOptions& options, std::string_view path) {
  if (options.prefix) return path.starts_with(route);
  const bool alias = options.trailing_slash_alias;
  if (path.size() == route.size()) return path == route;
  return alias && path.size() == route.size() + 1 && path.back() == '/' &&
         path.substr(0, route.size()) == route;
}

void NotFound(Request& req) { req.Reply(404, "not found\n"); }

// The loop running on this thread (accept errors are reported without our argument).
thread_local ServerLoop* t_running_loop = nullptr;

timeval Milliseconds(int64_t ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// A short answer written straight to the socket of a connection being cut: the client
// learns why instead of seeing a bare close. Best effort (the send buffer of a socket
// that is being cut always has room for it, or the client is gone anyway).
void SendRaw(int fd, const char* status, const char* name) {
  if (fd < 0) return;
  std::string body = std::string(name) + "\n";
  std::string text = std::string("HTTP/1.1 ") + status +
                     "\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8"
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ssize_t n = send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)n;
}

}  // namespace

// ---- ServerLoop ----

ServerLoop::ServerLoop(Server* server, int index) : server_(server), index_(index) {
  for (size_t i = 0; i < server->routes_.size(); ++i) {
    latency_.push_back(std::make_unique<LatencyHistogram>());
  }
}

ServerLoop::~ServerLoop() {
  if (http_ != nullptr) Shutdown();
  if (accept_resume_ != nullptr) event_free(accept_resume_);
  if (stop_event_ != nullptr) event_free(stop_event_);
  if (base_ != nullptr) event_base_free(base_);
}

Status ServerLoop::Init(int listen_fd) {
  // The epoll changelist folds the event changes made within one loop iteration into one
  // epoll_ctl per descriptor: evhttp disables and re-enables a connection's read and write
  // interest several times per request (17 -> 8 epoll_ctl per API /series, see
  // docs/benchmarks.md). Safe here: no descriptor is ever dup()ed (libevent's caveat).
  event_config* config = event_config_new();
  if (config != nullptr) {
    event_config_set_flag(config, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    base_ = event_base_new_with_config(config);
    event_config_free(config);
  }
  http_ = base_ ? evhttp_new(base_) : nullptr;
  if (http_ == nullptr) {
    close(listen_fd);
    return Status::Error("cannot create an event loop");
  }
  const ServerOptions& o = server_->options_;
  // evhttp counts the request line against the header limit, so a long URL must fit
  // there too to reach our 414 (beyond both it gets evhttp's 413).
  evhttp_set_max_headers_size(http_, static_cast<ev_ssize_t>(o.max_url_bytes + o.max_header_bytes));
  evhttp_set_max_body_size(http_, static_cast<ev_ssize_t>(o.max_body_bytes));
  const timeval idle = Milliseconds(o.limits.idle_timeout_ms);
  evhttp_set_timeout_tv(http_, &idle);
  const timeval deadline = Milliseconds(o.limits.request_timeout_ms);
  request_timeout_ = event_base_init_common_timeout(base_, &deadline);
  evhttp_set_default_content_type(http_, "text/plain; charset=utf-8");
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                        EVHTTP_REQ_OPTIONS);
  // Lingering close: on a body over the limit evhttp reads (and drops) the rest before
  // closing, so the client gets the 413 instead of a connection reset.
  evhttp_set_flags(http_, EVHTTP_SERVER_LINGERING_CLOSE);
  evhttp_set_gencb(http_, &ServerLoop::OnRequest, this);
  evhttp_set_bevcb(http_, &ServerLoop::OnNewConnection, this);
  evhttp_bound_socket* bound = evhttp_accept_socket_with_handle(http_, listen_fd);
  if (bound == nullptr) {
    close(listen_fd);
    return Status::Error("cannot accept on the listening socket");
  }
  listener_ = evhttp_bound_socket_get_listener(bound);
  evconnlistener_set_error_cb(listener_, &ServerLoop::OnAcceptError);
  accept_resume_ = event_new(base_, -1, 0, &ServerLoop::OnAcceptResume, this);
  stop_event_ = event_new(base_, -1, 0, &ServerLoop::OnStopEvent, this);
  return Status::OK();
}

void ServerLoop::Loop() {
  t_running_loop = this;
  event_base_dispatch(base_);
  t_running_loop = nullptr;
  Shutdown();
}

void ServerLoop::RequestStop() { event_active(stop_event_, EV_READ, 1); }

void ServerLoop::OnStopEvent(int, short, void* arg) {
  event_base_loopbreak(static_cast<ServerLoop*>(arg)->base_);
}

void ServerLoop::Shutdown() {
  while (pending_ != nullptr) {
    AsyncReply* reply = pending_;
    RemovePending(reply);
    reply->Abandon();  // may destroy reply
  }
  if (http_ != nullptr) {
    evhttp_free(http_);  // closes every connection (Destroy()ing the adopted ones)
    http_ = nullptr;
  }
  // Connections accepted just before the stop, whose adoption never ran: evhttp has freed
  // its side; the reference we kept on the bufferevent is the last one.
  while (connections_ != nullptr) {
    Connection* conn = connections_;
    bufferevent* bev = conn->bev;
    conn->bev = nullptr;
    Destroy(conn);
    if (bev != nullptr) bufferevent_decref(bev);
  }
}

// ---- connections and limits (docs/net.md#limits) ----

bufferevent* ServerLoop::OnNewConnection(event_base* base, void* arg) {
  auto* self = static_cast<ServerLoop*>(arg);
  Server::Counters& c = *self->server_->counters_;
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;  // evhttp tries its own, and fails the same way
  auto* conn = new Connection();
  conn->loop = self;
  conn->bev = bev;
  // Held until the adoption: if evhttp gives up on the connection first, the
  // bufferevent (and what it says about that) stays readable.
  bufferevent_incref(bev);
  conn->input_cb = evbuffer_add_cb(bufferevent_get_input(bev), &ServerLoop::OnInput, conn);
  conn->timer = event_new(base, -1, 0, &ServerLoop::OnConnectionTimer, conn);
  conn->next = self->connections_;
  if (self->connections_ != nullptr) self->connections_->prev = conn;
  self->connections_ = conn;
  c.accepted.fetch_add(1, std::memory_order_relaxed);
  const uint64_t open = c.open.fetch_add(1, std::memory_order_relaxed) + 1;
  if (open > self->server_->options_.limits.max_connections) conn->cut = Connection::Cut::kOverCap;
  // Runs in this same pass of the loop, after evhttp has set the connection up and
  // before any of its bytes can be read.
  event_active(conn->timer, EV_TIMEOUT, 1);
  return bev;
}

void ServerLoop::Adopt(Connection* conn) {
  conn->adopted = true;
  bufferevent_data_cb read_cb = nullptr, write_cb = nullptr;
  bufferevent_event_cb event_cb = nullptr;
  void* cb_arg = nullptr;
  bufferevent_getcb(conn->bev, &read_cb, &write_cb, &event_cb, &cb_arg);
  auto* evcon = static_cast<evhttp_connection*>(cb_arg);
  bufferevent* bev = conn->bev;
  if (event_cb == nullptr || evcon == nullptr || evhttp_connection_get_bufferevent(evcon) != bev) {
    // evhttp freed the connection already (it clears the callbacks of a bufferevent it
    // frees): ours is the last reference.
    conn->bev = nullptr;
    Destroy(conn);
    bufferevent_decref(bev);
    return;
  }
  conn->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &ServerLoop::OnConnectionClosed, conn);
  by_evcon_.emplace(evcon, conn);
  bufferevent_decref(bev);  // evhttp's again alone
  if (conn->cut == Connection::Cut::kOverCap) {
    server_->counters_->refused.fetch_add(1, std::memory_order_relaxed);
    Cut(conn, "503 Service Unavailable", "TOO_MANY_CONNECTIONS");
  }
}

void ServerLoop::OnConnectionTimer(int, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  ServerLoop* self = conn->loop;
  if (!conn->adopted) return self->Adopt(conn);
  conn->deadline_armed = false;
  if (conn->cut == Connection::Cut::kBudget) {
    self->server_->counters_->budget_refusals.fetch_add(1, std::memory_order_relaxed);
    return self->Cut(conn, "503 Service Unavailable", "BODY_BUDGET_EXCEEDED");
  }
  self->server_->counters_->timeouts.fetch_add(1, std::memory_order_relaxed);
  self->Cut(conn, "408 Request Timeout", "REQUEST_TIMEOUT");
}

// Every change of a connection's input buffer; only reads add bytes. Runs inside
// libevent's read callback, before evhttp parses what was read: nothing may be freed here.
void ServerLoop::OnInput(evbuffer*, const evbuffer_cb_info* info, void* arg) {
  if (info->n_added == 0) return;
  auto* conn = static_cast<Connection*>(arg);
  ServerLoop* self = conn->loop;
  if (!conn->adopted || conn->discarding) return;
  if (!conn->deadline_armed) {
    conn->deadline_armed = true;
    event_add(conn->timer, self->request_timeout_);
  }
  const ServerOptions& o = self->server_->options_;
  conn->received += info->n_added;
  if (conn->received > o.max_url_bytes + o.max_header_bytes + o.max_body_bytes) {
    // evhttp answers 413 (or 400) and reads the rest only to drop it: nothing is held.
    self->Release(conn);
    conn->discarding = true;
    return;
  }
  conn->charged += info->n_added;
  Server::Counters& c = *self->server_->counters_;
  const uint64_t total = c.inflight.fetch_add(info->n_added, std::memory_order_relaxed) + info->n_added;
  if (total > o.limits.max_inflight_body_bytes && conn->cut == Connection::Cut::kNone) {
    conn->cut = Connection::Cut::kBudget;
    event_active(conn->timer, EV_TIMEOUT, 1);  // cut once evhttp is done with this read
  }
}

void ServerLoop::Release(Connection* conn) {
  if (conn->charged == 0) return;
  server_->counters_->inflight.fetch_sub(conn->charged, std::memory_order_relaxed);
  conn->charged = 0;
}

void ServerLoop::Cut(Connection* conn, const char* status, const char* name) {
  SendRaw(bufferevent_getfd(conn->bev), status, name);
  evhttp_connection_free(conn->evcon);  // runs OnConnectionClosed: conn is gone
}

void ServerLoop::OnConnectionClosed(evhttp_connection*, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  ServerLoop* self = conn->loop;
  if (AsyncReply* reply = conn->async) {
    conn->async = nullptr;
    reply->conn_ = nullptr;
    reply->ClientGone();  // may destroy reply
  }
  self->Destroy(conn);
}

void ServerLoop::Destroy(Connection* conn) {
  Release(conn);
  if (conn->evcon != nullptr) by_evcon_.erase(conn->evcon);
  if (conn->bev != nullptr && conn->input_cb != nullptr) {
    evbuffer_remove_cb_entry(bufferevent_get_input(conn->bev), conn->input_cb);
  }
  if (conn->timer != nullptr) event_free(conn->timer);
  if (conn->prev != nullptr) conn->prev->next = conn->next;
  else connections_ = conn->next;
  if (conn->next != nullptr) conn->next->prev = conn->prev;
  server_->counters_->open.fetch_sub(1, std::memory_order_relaxed);
  delete conn;
}

Connection* ServerLoop::ConnectionOf(evhttp_request* req) const {
  auto it = by_evcon_.find(evhttp_request_get_connection(req));
  return it == by_evcon_.end() ? nullptr : it->second;
}

void ServerLoop::OnAcceptError(evconnlistener* listener, void*) {
  // The listener's argument is evhttp's, so the loop is found through its thread.
  ServerLoop* self = t_running_loop;
  if (self == nullptr || self->listener_ != listener) return;
  const int err = errno;
  self->server_->counters_->accept_errors.fetch_add(1, std::memory_order_relaxed);
  // The connection stays in the kernel's queue, so retrying at once would spin (EMFILE
  // until a descriptor is closed). Pause this loop's accepting instead.
  evconnlistener_disable(listener);
  const int64_t backoff = self->server_->options_.limits.accept_backoff_ms;
  const timeval tv = Milliseconds(backoff);
  event_add(self->accept_resume_, &tv);
  const int64_t now = static_cast<int64_t>(MonotonicMicros());
  if (self->last_accept_log_us_ < 0 || now - self->last_accept_log_us_ >= 10 * 1000 * 1000) {
    self->last_accept_log_us_ = now;
    std::fprintf(stderr, "accept: %s; accepting paused for %lld ms (logged at most every 10 s)\n",
                 std::strerror(err), static_cast<long long>(backoff));
  }
}

void ServerLoop::OnAcceptResume(int, short, void* arg) {
  auto* self = static_cast<ServerLoop*>(arg);
  if (self->listener_ != nullptr) evconnlistener_enable(self->listener_);
}

void ServerLoop::AddPending(AsyncReply* reply) {
  reply->prev_ = nullptr;
  reply->next_ = pending_;
  if (pending_ != nullptr) pending_->prev_ = reply;
  pending_ = reply;
}

void ServerLoop::RemovePending(AsyncReply* reply) {
  if (reply->prev_ != nullptr) reply->prev_->next_ = reply->next_;
  else pending_ = reply->next_;
  if (reply->next_ != nullptr) reply->next_->prev_ = reply->prev_;
  reply->prev_ = reply->next_ = nullptr;
}

void ServerLoop::OnRequest(evhttp_request* req, void* arg) {
  static_cast<ServerLoop*>(arg)->Dispatch(req);
}

// The request is complete: its deadline ends and its bytes leave the in-flight budget.
// False when it was refused instead (503 BODY_BUDGET_EXCEEDED).
[[gnu::always_inline]] inline bool ServerLoop::EndReceiving(Connection* conn, Request& r) {
  if (conn->deadline_armed) {
    event_del(conn->timer);
    conn->deadline_armed = false;
  }
  Release(conn);
  conn->received = 0;
  conn->discarding = false;
  if (conn->cut != Connection::Cut::kBudget) return true;
  // Its last read completed it and pushed the total over: answered here instead.
  event_del(conn->timer);
  conn->cut = Connection::Cut::kNone;
  server_->counters_->budget_refusals.fetch_add(1, std::memory_order_relaxed);
  r.AddHeader("Connection", "close");
  r.ReplyJsonError(503, "BODY_BUDGET_EXCEEDED",
                   "the server is receiving too many request bytes; retry later");
  return false;
}

// r's path and raw query from the request target; false after answering 414.
[[gnu::always_inline]] inline bool ServerLoop::ReadTarget(evhttp_request* req, Request& r) {
  const char* uri = evhttp_request_get_uri(req);
  std::string_view target = uri != nullptr ? std::string_view(uri) : std::string_view();
  if (target.size() > server_->options_.max_url_bytes) {
    r.Reply(414, "URL longer than " + std::to_string(server_->options_.max_url_bytes) +
                     " bytes\n");
    return false;
  }
  if (!target.empty() && target[0] == '/') {
    size_t hash = target.find('#');
    if (hash != std::string_view::npos) target = target.substr(0, hash);
    size_t question = target.find('?');
    r.path_ = target.substr(0, question);
    r.raw_query_ = question == std::string_view::npos ? std::string_view()
                                                      : target.substr(question + 1);
  } else {
    // Absolute form ("GET http://host/get?key=a", RFC 7230 5.3.2): evhttp has parsed it.
    const evhttp_uri* parsed = evhttp_request_get_evhttp_uri(req);
    const char* path = parsed != nullptr ? evhttp_uri_get_path(parsed) : nullptr;
    const char* query = parsed != nullptr ? evhttp_uri_get_query(parsed) : nullptr;
    r.path_ = path != nullptr ? std::string_view(path) : std::string_view();
    r.raw_query_ = query != nullptr ? std::string_view(query) : std::string_view();
  }
  return true;
}

// The first route matching r's path answers it (404 when none does); a handler that throws
// or does not reply is logged and answered 500.
[[gnu::always_inline]] inline void ServerLoop::RunRoute(Request& r) {
  const Handler* handler = nullptr;
  const auto& routes = server_->routes_;
  for (size_t i = 0; i < routes.size(); ++i) {
    if (RouteMatches(routes[i].path, routes[i].options, r.path_)) {
      handler = &routes[i].handler;
      r.route_ = static_cast<int>(i);
      break;
    }
  }
  try {
    if (handler != nullptr) {
      (*handler)(r);
    } else {
      NotFound(r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handler for %.*s threw: %s\n", static_cast<int>(r.path_.size()),
                 r.path_.data(), e.what());
  } catch (...) {
    std::fprintf(stderr, "handler for %.*s threw\n", static_cast<int>(r.path_.size()),
                 r.path_.data());
  }
  if (!r.replied_) {
    std::fprintf(stderr, "handler for %.*s did not reply; sending 500\n",
                 static_cast<int>(r.path_.size()), r.path_.data());
    r.Reply(500, "internal error: no reply\n");
  }
}

// A complete request: ends its connection's receiving, reads its target, runs its route.
void ServerLoop::Dispatch(evhttp_request* req) {
  Request r;
  r.req_ = req;
  r.loop_ = this;
  r.start_micros_ = MonotonicMicros();
  r.conn_ = ConnectionOf(req);
  if (r.conn_ != nullptr && !EndReceiving(r.conn_, r)) return;
  if (!ReadTarget(req, r)) return;
  query_.Parse(r.raw_query_);
  r.query_ = &query_;
  RunRoute(r);
}

// ---- Server ----

struct Server::Signals {
  event* term = nullptr;
  event* interrupt = nullptr;
  event* hangup = nullptr;
  event* stop = nullptr;    // Stop() from any thread
  event* sighup = nullptr;  // TriggerSighup() from any thread
  std::atomic<bool> stop_requested{false};
  bool stopping = false;  // loop 0 only

  ~Signals() {
    for (event* e : {term, interrupt, hangup, stop, sighup}) {
      if (e != nullptr) event_free(e);
    }
  }
};

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      signals_(std::make_unique<Signals>()),
      counters_(std::make_unique<Counters>()) {
  InitLibeventThreads();
  if (options_.threads < 1) options_.threads = 1;
}

Server::~Server() {
  // Signal events live on loop 0's base: free them before the loops free their bases.
  signals_.reset();
  for (auto& loop : loops_) {
    if (loop->thread.joinable()) loop->thread.join();
  }
  loops_.clear();
}

void Server::Handle(std::string path, Handler handler, RouteOptions options) {
  routes_.push_back({std::move(path), std::move(handler), options});
}

void Server::OnSighup(std::function<void()> fn) { on_sighup_ = std::move(fn); }

void Server::OnStop(std::function<void()> fn) { on_stop_ = std::move(fn); }

Status Server::Listen() {
  if (listening_) return Status::Error("server is already listening");
  bool reuse_port = options_.threads > 1;
  uint16_t port = options_.port;
  for (int i = 0; i < options_.threads; ++i) {
    int fd = -1;
    uint16_t bound = 0;
    Status s = OpenListener(options_.address, port, reuse_port, &fd, &bound);
    if (!s.ok()) {
      loops_.clear();
      return s;
    }
    port = bound;  // loops after the first join the port the first one got
    auto loop = std::make_unique<ServerLoop>(this, i);
    s = loop->Init(fd);
    if (!s.ok()) {
      loops_.clear();
      return s;
    }
    loops_.push_back(std::move(loop));
  }
  port_ = port;
  listening_ = true;

  event_base* base0 = loops_[0]->base();
  auto on_stop = [](int, short, void* arg) { static_cast<Server*>(arg)->StopFromLoop(); };
  auto on_hup = [](int, short, void* arg) {
    auto* self = static_cast<Server*>(arg);
    if (self->on_sighup_) self->on_sighup_();
  };
  signals_->stop = event_new(base0, -1, 0, on_stop, this);
  signals_->sighup = event_new(base0, -1, 0, on_hup, this);
  if (options_.handle_signals) {
    signals_->term = evsignal_new(base0, SIGTERM, on_stop, this);
    signals_->interrupt = evsignal_new(base0, SIGINT, on_stop, this);
    signals_->hangup = evsignal_new(base0, SIGHUP, on_hup, this);
    event_add(signals_->term, nullptr);
    event_add(signals_->interrupt, nullptr);
    event_add(signals_->hangup, nullptr);
  }
  if (signals_->stop_requested.load()) event_active(signals_->stop, EV_READ, 1);
  return Status::OK();
}

event_base* Server::base(int i) const { return loops_[i]->base(); }

void Server::Run() {
  for (size_t i = 1; i < loops_.size(); ++i) {
    ServerLoop* loop = loops_[i].get();
    loop->thread = std::thread([loop] { loop->Loop(); });
  }
  loops_[0]->Loop();
  for (size_t i = 1; i < loops_.size(); ++i) loops_[i]->thread.join();
}

void Server::Stop() {
  if (signals_->stop_requested.exchange(true)) return;
  if (listening_) event_active(signals_->stop, EV_READ, 1);
}

void Server::TriggerSighup() {
  if (listening_) event_active(signals_->sighup, EV_READ, 1);
}

void Server::StopFromLoop() {
  signals_->stop_requested.store(true);
  if (signals_->stopping) return;
  signals_->stopping = true;
  if (on_stop_) on_stop_();
  // Signal events would keep SIGTERM from killing a process that is already stopping
  // slowly; remove them so a second SIGTERM gets the default action.
  for (event* e : {signals_->term, signals_->interrupt, signals_->hangup}) {
    if (e != nullptr) event_del(e);
  }
  for (auto& loop : loops_) loop->RequestStop();
}

std::vector<RouteLatency> Server::Latency() const {
  std::vector<RouteLatency> out;
  for (size_t i = 0; i < routes_.size(); ++i) {
    RouteLatency r;
    r.path = routes_[i].path;
    for (const auto& loop : loops_) r.latency.Merge(loop->Snapshot(static_cast<int>(i)));
    out.push_back(std::move(r));
  }
  return out;
}

LimitStats Server::Stats() const {
  LimitStats s;
  const Counters& c = *counters_;
  s.open_connections = c.open.load(std::memory_order_relaxed);
  s.accepted_connections = c.accepted.load(std::memory_order_relaxed);
  s.refused_connections = c.refused.load(std::memory_order_relaxed);
  s.request_timeouts = c.timeouts.load(std::memory_order_relaxed);
  s.budget_refusals = c.budget_refusals.load(std::memory_order_relaxed);
  s.inflight_body_bytes = c.inflight.load(std::memory_order_relaxed);
  s.accept_errors = c.accept_errors.load(std::memory_order_relaxed);
  s.secret_missing = c.secret_missing.load(std::memory_order_relaxed);
  s.secret_wrong = c.secret_wrong.load(std::memory_order_relaxed);
  return s;
}

void Server::CountSecretRefusal(bool wrong_secret) {
  (wrong_secret ? counters_->secret_wrong : counters_->secret_missing).fetch_add(1, std::memory_order_relaxed);
}

void Server::WriteLimitFields(StatsWriter* w) const {
  const ServerLimits& l = options_.limits;
  w->Gauge("max_connections", uint64_t(l.max_connections), "clickatron_http_max_connections",
           "Open connections allowed (--max-connections).");
  w->Gauge("request_timeout_ms", l.request_timeout_ms, "clickatron_http_request_timeout_seconds",
           "Time a whole request may take to arrive (--request-timeout-ms).", 1000);
  w->Gauge("idle_timeout_ms", l.idle_timeout_ms, "clickatron_http_idle_timeout_seconds",
           "Time a connection may stay idle (--idle-timeout-ms).", 1000);
  w->Gauge("max_body_bytes", uint64_t(options_.max_body_bytes), "clickatron_http_max_body_bytes",
           "Largest request body.");
  w->Gauge("max_inflight_body_bytes", uint64_t(l.max_inflight_body_bytes), "clickatron_http_max_inflight_body_bytes",
           "Request bytes being received allowed, all connections (--max-inflight-body-mb).");
  const LimitStats s = Stats();
  w->Gauge("open_connections", s.open_connections, "clickatron_http_open_connections", "Connections open now.");
  w->Counter("accepted_connections", s.accepted_connections, "clickatron_http_accepted_connections_total",
             "Connections accepted.");
  w->Counter("refused_connections", s.refused_connections, "clickatron_http_refused_connections_total",
             "Connections refused 503 TOO_MANY_CONNECTIONS (max-connections).");
  w->Counter("request_timeouts", s.request_timeouts, "clickatron_http_request_timeouts_total",
             "Requests cut 408 REQUEST_TIMEOUT (request-timeout-ms).");
  w->Counter("budget_refusals", s.budget_refusals, "clickatron_http_budget_refusals_total",
             "Requests refused 503 BODY_BUDGET_EXCEEDED (max-inflight-body-mb).");
  w->Gauge("inflight_body_bytes", s.inflight_body_bytes, "clickatron_http_inflight_body_bytes",
           "Request bytes being received now, all connections.");
  w->Counter("accept_errors", s.accept_errors, "clickatron_http_accept_errors_total",
             "Accept errors (EMFILE, ENFILE...), each pausing accepting for 100 ms.");
  w->Counter("secret_missing", s.secret_missing, "clickatron_http_secret_missing_total",
             "Requests refused 401 SECRET_MISSING (no cluster secret).");
  w->Counter("secret_wrong", s.secret_wrong, "clickatron_http_secret_wrong_total",
             "Requests refused 403 SECRET_WRONG (another cluster secret).");
}

void Server::WriteLatencyJson(StatsWriter* w) const {
  w->BeginObject();
  for (const RouteLatency& r : Latency()) {
    auto path = w->Label("path", r.path);
    w->BeginObject(r.path);
    w->Histogram(r.latency, "clickatron_http_request_duration_seconds",
                 "Time from a request's dispatch to its reply handed to the connection, per route.");
    w->Field("count", r.latency.count());
    w->Field("p50_us", r.latency.Quantile(0.5));
    w->Field("p99_us", r.latency.Quantile(0.99));
    w->Field("p999_us", r.latency.Quantile(0.999));
    w->Field("max_us", r.latency.max_micros());
    w->EndObject();
  }
  w->EndObject();
}

}  // namespace clickatron::net
