#include "net/http_server.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
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
#include "net/loop_waker.h"
#include "net/server_loop.h"

namespace clickatron::net {

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
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    freeaddrinfo(found);
    return ErrnoStatus(err, where + ": socket");
  }
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
    close(fd);
    return ErrnoStatus(err, where);
  }
  freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *bound_port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  *fd_out = fd;
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

}  // namespace

// ---- ServerLoop ----

ServerLoop::ServerLoop(Server* server, int index) : server_(server), index_(index) {
  for (size_t i = 0; i < server->routes_.size(); ++i) {
    latency_.push_back(std::make_unique<LatencyHistogram>());
  }
}

ServerLoop::~ServerLoop() {
  if (http_ != nullptr) Shutdown();
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
  evhttp_set_timeout(http_, o.idle_timeout_seconds);
  evhttp_set_default_content_type(http_, "text/plain; charset=utf-8");
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                        EVHTTP_REQ_OPTIONS);
  // Lingering close: on a body over the limit evhttp reads (and drops) the rest before
  // closing, so the client gets the 413 instead of a connection reset.
  evhttp_set_flags(http_, EVHTTP_SERVER_LINGERING_CLOSE);
  evhttp_set_gencb(http_, &ServerLoop::OnRequest, this);
  if (evhttp_accept_socket_with_handle(http_, listen_fd) == nullptr) {
    close(listen_fd);
    return Status::Error("cannot accept on the listening socket");
  }
  stop_event_ = event_new(base_, -1, 0, &ServerLoop::OnStopEvent, this);
  return Status::OK();
}

void ServerLoop::Loop() {
  event_base_dispatch(base_);
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
    evhttp_free(http_);  // closes every connection, frees their requests
    http_ = nullptr;
  }
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

void ServerLoop::Dispatch(evhttp_request* req) {
  Request r;
  r.req_ = req;
  r.loop_ = this;
  r.start_micros_ = MonotonicMicros();

  const char* uri = evhttp_request_get_uri(req);
  std::string_view target = uri != nullptr ? std::string_view(uri) : std::string_view();
  if (target.size() > server_->options_.max_url_bytes) {
    r.Reply(414, "URL longer than " + std::to_string(server_->options_.max_url_bytes) +
                     " bytes\n");
    return;
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
  query_.Parse(r.raw_query_);
  r.query_ = &query_;

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
    : options_(std::move(options)), signals_(std::make_unique<Signals>()) {
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

void Server::WriteLatencyJson(JsonWriter* w) const {
  w->BeginObject();
  for (const RouteLatency& r : Latency()) {
    w->BeginObject(r.path);
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
