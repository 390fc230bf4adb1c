#include "net/http_client.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/errno_status.h"
#include "base/latency.h"
#include "base/unique_fd.h"
#include "net/http_response_parser.h"
#include "net/loop_waker.h"

// The client speaks HTTP/1.1 on its own non-blocking sockets instead of through evhttp's
// client: evhttp re-registers a connection's epoll interest several times per exchange,
// reads at most 4 KB per loop iteration (libevent 2.1's EVBUFFER_MAX_READ) with an
// ioctl(FIONREAD) before each read, and writes only from the next loop iteration. Here a
// connection's read interest is registered once, for its whole life; a request is written
// at once (a write event is used only when the socket cannot take it all); a response is
// read with as few recv() calls as its size needs. The API's /series makes two backend calls
// per query: 17 -> 0 epoll_ctl and 12 -> ~3 read-side syscalls per query, see
// docs/benchmarks.md ("api: read path").

namespace clickatron::net {

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

namespace {

// Bytes of the response head (status line and headers) and of a chunk-size line the
// client accepts; a larger head is an invalid response.
constexpr size_t kReadBufferBytes = 64 * 1024;
timeval ToTimeval(uint64_t micros) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(micros / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(micros % 1000000);
  return tv;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool ValidMethod(const std::string& m) {
  return m == "GET" || m == "POST" || m == "HEAD" || m == "PUT" || m == "DELETE";
}

// *out = the request head and body: the client's headers, then the request's, a Host
// header unless one was given, Content-Length when there is a body (or POST/PUT).
void AppendRequest(const std::vector<std::pair<std::string, std::string>>& client_headers,
                   const RequestOptions& options, std::string_view path_and_query,
                   const std::string& host, std::string* out) {
  out->clear();
  out->reserve(path_and_query.size() + host.size() + 64 + options.body.size());
  *out += options.method;
  *out += ' ';
  *out += path_and_query;
  *out += " HTTP/1.1\r\n";
  bool has_host = false;
  for (const auto* headers : {&client_headers, &options.headers}) {
    for (const auto& [name, value] : *headers) {
      has_host = has_host || EqualsNoCase(name, "Host");
      *out += name;
      *out += ": ";
      *out += value;
      *out += "\r\n";
    }
  }
  if (!has_host) {
    *out += "Host: ";
    *out += host;
    *out += "\r\n";
  }
  if (!options.body.empty() || options.method == "POST" || options.method == "PUT") {
    *out += "Content-Length: ";
    *out += std::to_string(options.body.size());
    *out += "\r\n";
  }
  *out += "\r\n";
  *out += options.body;
}

}  // namespace

struct HttpClient::Pool {
  HostPort to;
  std::string label;  // "host:port", the prefix of error texts
  std::vector<Conn*> idle;
};

// One TCP connection. Its read event stays registered from connect to close, also while it
// is idle in the pool (a server closing an idle connection is then noticed at once).
struct HttpClient::Conn {
  HttpClient* client = nullptr;
  Pool* pool = nullptr;
  int fd = -1;
  event* read_ev = nullptr;   // EV_READ | EV_PERSIST
  event* write_ev = nullptr;  // EV_WRITE: connect completion, or output the socket refused
  bool connecting = false;
  bool dead = false;          // closed; freed by the reaper
  Call* call = nullptr;       // the request on it, or null when idle
  std::string out;            // request bytes not yet written
  size_t out_done = 0;
  std::unique_ptr<char[]> buf;  // received bytes not yet parsed: [buf_start, buf_end)
  size_t buf_start = 0;
  size_t buf_end = 0;
  uint64_t last_io_micros = 0;
  Conn* prev = nullptr;       // every live connection of the client
  Conn* next = nullptr;

  static void OnReadable(int fd, short what, void* arg);
  bool ParseBuffered(Call* call, size_t n);  // the step of OnReadable past a recv into buf
  static void OnWritable(int fd, short what, void* arg);
  void Close();
  bool Flush();  // writes out; false after failing the call
};

// One request in flight, from Request() until its callback has been called (or the client
// is destroyed).
struct HttpClient::Call {
  HttpClient* client = nullptr;
  Pool* pool = nullptr;
  Conn* conn = nullptr;
  event* timer = nullptr;
  ResponseCallback callback;
  HttpResponseParser parser;      // the response, read from conn's buffer
  uint64_t deadline_micros = 0;   // 0: no total timeout
  uint64_t connect_deadline_micros = 0;
  int timeout_ms = 0;
  bool fresh = false;             // conn was opened for this call
  bool connect_check = false;     // the timer is (also) the connect timeout
  bool finished = false;
  bool has_error = false;
  std::string error;              // set before a deferred failure (timer fires at once)
  Call* prev = nullptr;
  Call* next = nullptr;

  static void OnTimer(int fd, short what, void* arg);
  void Fail(std::string text);
  void Complete(bool connection_reusable);
  void ArmTimer(uint64_t now);
  // Parses what arrived in conn's buffer; returns false once the call is finished (the
  // caller must then not touch the call or, unless it checks `dead`, the connection).
  bool Parse(std::string_view* data);
  // A complete response; `leftover`: bytes after it on the connection (none are expected,
  // so the connection is then not reused).
  bool Finish(bool leftover);
};

// ---- client ----

HttpClient::HttpClient(event_base* base, ClientOptions options)
    : base_(base), options_(options) {
  InitLibeventThreads();
  reaper_ = event_new(base_, -1, 0, &HttpClient::OnReap, this);
}

HttpClient::~HttpClient() {
  while (calls_ != nullptr) {
    Call* call = calls_;
    calls_ = call->next;
    event_free(call->timer);
    delete call;
  }
  while (conns_ != nullptr) {
    Conn* conn = conns_;
    conns_ = conn->next;
    if (conn->read_ev != nullptr) event_free(conn->read_ev);
    if (conn->write_ev != nullptr) event_free(conn->write_ev);
    if (conn->fd >= 0) close(conn->fd);
    delete conn;
  }
  for (Conn* conn : doomed_) delete conn;
  event_free(reaper_);
}

HttpClient::Pool* HttpClient::PoolFor(const HostPort& to) {
  for (const std::unique_ptr<Pool>& pool : pools_) {
    if (pool->to.port == to.port && pool->to.host == to.host) return pool.get();
  }
  auto pool = std::make_unique<Pool>();
  pool->to = to;
  pool->label = to.ToString();
  pools_.push_back(std::move(pool));
  return pools_.back().get();
}

size_t HttpClient::idle_connections(const HostPort& to) const {
  for (const std::unique_ptr<Pool>& pool : pools_) {
    if (pool->to == to) return pool->idle.size();
  }
  return 0;
}

void HttpClient::Get(const HostPort& to, std::string_view path_and_query, int timeout_ms,
                     ResponseCallback callback) {
  RequestOptions options;
  options.timeout_ms = timeout_ms;
  Request(to, path_and_query, std::move(options), std::move(callback));
}

void HttpClient::Post(const HostPort& to, std::string_view path_and_query, std::string body,
                      int timeout_ms, ResponseCallback callback) {
  RequestOptions options;
  options.method = "POST";
  options.body = std::move(body);
  options.timeout_ms = timeout_ms;
  Request(to, path_and_query, std::move(options), std::move(callback));
}

// Opens a non-blocking connection to pool's host; errors name the cause. The connect
// completes later (write event), or fails then.
Status HttpClient::Connect(Pool* pool, Conn** out) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(pool->to.port);
  if (inet_pton(AF_INET, pool->to.host.c_str(), &addr.sin_addr) != 1) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(pool->to.host.c_str(), nullptr, &hints, &found);
    if (rc != 0 || found == nullptr) {
      return Status::Error("cannot resolve host: " + std::string(gai_strerror(rc)));
    }
    addr.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
    freeaddrinfo(found);
  }
  UniqueFd socket_fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket_fd.valid()) return ErrnoStatus(errno, "cannot connect");
  const int fd = socket_fd.get();
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    return err == ECONNREFUSED ? Status::Error("connection refused") : ErrnoStatus(err, "cannot connect");
  }
  auto* conn = new Conn();
  conn->client = this;
  conn->pool = pool;
  conn->fd = socket_fd.release();  // the connection's own: Conn::Close frees its events, then closes it
  conn->connecting = rc != 0;
  conn->buf.reset(new char[kReadBufferBytes]);
  conn->read_ev = event_new(base_, fd, EV_READ | EV_PERSIST, &Conn::OnReadable, conn);
  conn->write_ev = event_new(base_, fd, EV_WRITE, &Conn::OnWritable, conn);
  conn->next = conns_;
  if (conns_ != nullptr) conns_->prev = conn;
  conns_ = conn;
  ++connections_opened_;
  if (!conn->connecting) event_add(conn->read_ev, nullptr);
  *out = conn;
  return Status::OK();
}

void HttpClient::Request(const HostPort& to, std::string_view path_and_query,
                         RequestOptions options, ResponseCallback callback) {
  Call* call = NewCall(to, options, std::move(callback));
  Pool* pool = call->pool;
  if (!ValidMethod(options.method) || path_and_query.empty() || path_and_query[0] != '/') {
    call->Fail(pool->label + ": " +
               (ValidMethod(options.method)
                    ? "request path '" + std::string(path_and_query) + "' does not start with '/'"
                    : "unsupported method '" + options.method + "'"));
    return;
  }
  if (!TakeConnection(call)) return;
  Conn* conn = call->conn;
  conn->out_done = 0;
  AppendRequest(options_.headers, options, path_and_query, pool->label, &conn->out);

  uint64_t now = MonotonicMicros();
  conn->last_io_micros = now;
  if (call->timeout_ms > 0) {
    call->deadline_micros = now + static_cast<uint64_t>(call->timeout_ms) * 1000;
  }
  call->connect_check = call->fresh && conn->connecting && options_.connect_timeout_ms > 0;
  call->connect_deadline_micros = now + static_cast<uint64_t>(options_.connect_timeout_ms) * 1000;
  call->ArmTimer(now);

  if (conn->connecting) {
    event_add(conn->write_ev, nullptr);  // writable = connected (or failed)
  } else {
    conn->Flush();  // a failure is called back through the timer, never from here
  }
}

// A call in calls_ with its parser started and its timer created (not armed).
HttpClient::Call* HttpClient::NewCall(const HostPort& to, RequestOptions& options,
                                      ResponseCallback callback) {
  auto* call = new Call();
  call->client = this;
  call->pool = PoolFor(to);
  call->callback = std::move(callback);
  call->parser.Start(options.method == "HEAD", options_.max_response_bytes,
                     std::move(options.on_chunk));
  call->timeout_ms = options.timeout_ms;
  call->timer = event_new(base_, -1, 0, &Call::OnTimer, call);
  call->next = calls_;
  if (calls_ != nullptr) calls_->prev = call;
  calls_ = call;
  ++in_flight_;
  return call;
}

// Gives the call an idle pooled connection, else a new one (fresh); false after failing
// the call when connecting failed.
bool HttpClient::TakeConnection(Call* call) {
  Pool* pool = call->pool;
  Conn* conn = nullptr;
  if (!pool->idle.empty()) {
    conn = pool->idle.back();
    pool->idle.pop_back();
  } else {
    Status s = Connect(pool, &conn);
    if (!s.ok()) {
      call->Fail(pool->label + ": " + s.message());
      return false;
    }
    call->fresh = true;
  }
  call->conn = conn;
  conn->call = call;
  return true;
}

void HttpClient::Call::ArmTimer(uint64_t now) {
  uint64_t at = 0;  // absolute, 0 = none
  auto earliest = [&at](uint64_t t) {
    if (t != 0 && (at == 0 || t < at)) at = t;
  };
  earliest(deadline_micros);
  if (client->options_.idle_timeout_ms > 0 && conn != nullptr) {
    earliest(conn->last_io_micros + static_cast<uint64_t>(client->options_.idle_timeout_ms) * 1000);
  }
  if (connect_check) earliest(connect_deadline_micros);
  if (at == 0) return;
  timeval tv = ToTimeval(at > now ? at - now : 0);
  event_add(timer, &tv);
}

// Finishes with a transport error, closing the connection. The callback runs from the
// timer, never from inside Request() or a half-done read.
void HttpClient::Call::Fail(std::string text) {
  if (finished || has_error) return;
  has_error = true;
  error = std::move(text);
  if (conn != nullptr) {
    conn->call = nullptr;
    conn->Close();
    conn = nullptr;
  }
  timeval zero{0, 0};
  event_del(timer);
  event_add(timer, &zero);
}

void HttpClient::Call::OnTimer(int, short, void* arg) {
  auto* call = static_cast<Call*>(arg);
  if (call->has_error) {
    call->Complete(false);
    return;
  }
  uint64_t now = MonotonicMicros();
  const ClientOptions& o = call->client->options_;
  if (call->connect_check && now >= call->connect_deadline_micros) {
    call->connect_check = false;
    if (call->conn != nullptr && call->conn->connecting) {
      call->Fail(call->pool->label + ": connect timeout after " + std::to_string(o.connect_timeout_ms) + " ms");
      return;
    }
  }
  if (call->deadline_micros != 0 && now >= call->deadline_micros) {
    call->Fail(call->pool->label + ": timeout after " + std::to_string(call->timeout_ms) + " ms");
    return;
  }
  if (o.idle_timeout_ms > 0 && call->conn != nullptr &&
      now >= call->conn->last_io_micros + static_cast<uint64_t>(o.idle_timeout_ms) * 1000) {
    call->Fail(call->pool->label + ": timeout: no data for " + std::to_string(o.idle_timeout_ms) + " ms");
    return;
  }
  call->ArmTimer(now);
}

// ---- connection I/O ----

void HttpClient::Conn::Close() {
  if (dead) return;
  dead = true;
  if (read_ev != nullptr) event_free(read_ev);
  if (write_ev != nullptr) event_free(write_ev);
  read_ev = write_ev = nullptr;
  close(fd);
  fd = -1;
  std::vector<Conn*>& idle = pool->idle;
  idle.erase(std::remove(idle.begin(), idle.end(), this), idle.end());
  HttpClient* c = client;
  if (prev != nullptr) prev->next = next;
  else c->conns_ = next;
  if (next != nullptr) next->prev = prev;
  // Freed outside whatever callback is running on it.
  c->doomed_.push_back(this);
  event_active(c->reaper_, EV_READ, 1);
}

bool HttpClient::Conn::Flush() {
  while (out_done < out.size()) {
    ssize_t n = send(fd, out.data() + out_done, out.size() - out_done, MSG_NOSIGNAL);
    if (n > 0) {
      out_done += static_cast<size_t>(n);
      last_io_micros = MonotonicMicros();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      event_add(write_ev, nullptr);
      return true;
    }
    int err = n < 0 ? errno : EPIPE;
    Call* c = call;
    c->Fail(pool->label + ": " + (err == EPIPE || err == ECONNRESET
                                      ? "connection closed before a complete response"
                                      : ErrnoStatus(err, "connection error").message()));
    return false;
  }
  out.clear();
  out_done = 0;
  return true;
}

void HttpClient::Conn::OnWritable(int, short, void* arg) {
  auto* conn = static_cast<Conn*>(arg);
  if (conn->connecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      if (conn->call != nullptr) {
        conn->call->Fail(conn->pool->label + ": " +
                         (err == ECONNREFUSED ? "connection refused"
                                              : ErrnoStatus(err, "cannot connect").message()));
      } else {
        conn->Close();
      }
      return;
    }
    conn->connecting = false;
    conn->last_io_micros = MonotonicMicros();
    event_add(conn->read_ev, nullptr);
  }
  if (conn->call != nullptr) conn->Flush();
}

void HttpClient::Conn::OnReadable(int, short, void* arg) {
  auto* conn = static_cast<Conn*>(arg);
  for (;;) {
    if (conn->call == nullptr) {
      // Idle in the pool: the server closed it (or sent bytes nobody asked for).
      conn->Close();
      return;
    }
    Call* call = conn->call;
    size_t space = kReadBufferBytes - conn->buf_end;
    char* into = conn->buf.get() + conn->buf_end;
    bool direct = false;
    // A preallocated body with nothing buffered is received straight into the response.
    if (conn->buf_start == conn->buf_end) {
      size_t body_space = 0;
      if (char* body = call->parser.DirectBody(&body_space)) {
        conn->buf_start = conn->buf_end = 0;
        into = body;
        space = body_space;
        direct = true;
      }
    }
    ssize_t n = recv(conn->fd, into, space, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      int err = errno;
      call->Fail(conn->pool->label + ": " +
                 (err == ECONNREFUSED ? "connection refused"
                                      : ErrnoStatus(err, "connection error").message()));
      return;
    }
    conn->last_io_micros = MonotonicMicros();
    if (n == 0) {
      if (call->parser.Close() == HttpResponseParser::State::kComplete) {
        call->Finish(false);
      } else {
        call->Fail(conn->pool->label + ": " + call->parser.error());
      }
      return;
    }
    bool filled = static_cast<size_t>(n) == space;
    if (direct) {
      if (call->parser.DirectReceived(static_cast<size_t>(n)) == HttpResponseParser::State::kComplete) {
        call->Finish(false);
        return;
      }
    } else if (!conn->ParseBuffered(call, static_cast<size_t>(n))) {
      return;
    }
    // A short read took everything the socket had: wait for the next readable event
    // instead of asking again just to hear EAGAIN.
    if (!filled) return;
  }
}

// n bytes were received into buf: what the call's parser takes is consumed, the rest kept
// at the front of buf. False once the call is finished (or failed).
bool HttpClient::Conn::ParseBuffered(Call* call, size_t n) {
  buf_end += n;
  std::string_view data(buf.get() + buf_start, buf_end - buf_start);
  size_t before = data.size();
  if (!call->Parse(&data)) return false;
  buf_start += before - data.size();
  if (buf_start == buf_end) {
    buf_start = buf_end = 0;
  } else if (buf_end == kReadBufferBytes) {
    if (buf_start == 0) {  // a head or chunk line that fills the whole buffer
      call->Fail(pool->label + ": invalid HTTP response");
      return false;
    }
    std::memmove(buf.get(), buf.get() + buf_start, buf_end - buf_start);
    buf_end -= buf_start;
    buf_start = 0;
  }
  return true;
}

// ---- response parsing (http_response_parser.h) ----

bool HttpClient::Call::Parse(std::string_view* data) {
  switch (parser.Parse(data)) {
    case HttpResponseParser::State::kMore:
      return true;
    case HttpResponseParser::State::kComplete:
      return Finish(!data->empty());
    case HttpResponseParser::State::kFailed:
      break;
  }
  Fail(pool->label + ": " + parser.error());
  return false;
}

bool HttpClient::Call::Finish(bool leftover) {
  Complete(parser.keep_alive() && !leftover);
  return false;
}

// Calls the callback and forgets the call. The connection goes back to the pool after a
// complete response (if reusable and the pool has room); otherwise it is closed.
void HttpClient::Call::Complete(bool connection_reusable) {
  if (finished) return;
  finished = true;
  HttpClient* c = client;
  event_del(timer);
  if (prev != nullptr) prev->next = next;
  else c->calls_ = next;
  if (next != nullptr) next->prev = prev;
  --c->in_flight_;
  if (conn != nullptr) {
    conn->call = nullptr;
    conn->buf_start = conn->buf_end = 0;
    if (connection_reusable && !conn->dead && pool->idle.size() < c->options_.max_idle_per_host) {
      pool->idle.push_back(conn);
    } else {
      conn->Close();
    }
    conn = nullptr;
  }
  HttpResponse& response = parser.response();
  if (has_error) {
    response.status = 0;
    response.error = error;
    response.headers.clear();
    response.body.clear();
  }
  ResponseCallback cb = std::move(callback);
  HttpResponse r = std::move(response);
  event_free(timer);
  delete this;
  cb(std::move(r));
}

void HttpClient::OnReap(int, short, void* arg) {
  auto* self = static_cast<HttpClient*>(arg);
  std::vector<Conn*> doomed;
  doomed.swap(self->doomed_);
  for (Conn* conn : doomed) delete conn;
}

}  // namespace clickatron::net
