#include "net/http_client.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <strings.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "net/latency.h"
#include "net/loop_waker.h"

namespace clickatron::net {

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

struct HttpClient::Pool {
  HostPort to;
  std::string label;  // "host:port", the prefix of error texts
  std::vector<evhttp_connection*> idle;
};

// One request in flight. Lives from Request() until its callback has been called (or the
// client is destroyed); evhttp's request object is evhttp's, never freed here.
struct HttpClient::Call {
  HttpClient* client = nullptr;
  Pool* pool = nullptr;
  evhttp_connection* conn = nullptr;
  evhttp_request* req = nullptr;  // null once evhttp has freed it or we cancelled it
  event* timer = nullptr;
  ResponseCallback callback;
  std::function<bool(std::string_view)> on_chunk;
  HttpResponse response;
  uint64_t deadline_micros = 0;   // 0: no total timeout
  int timeout_ms = 0;
  bool fresh = false;             // conn was opened for this call
  bool connect_check = false;     // the timer is the connect timeout
  bool finished = false;          // the callback has been (or is being) called
  bool has_error = false;
  std::string error;              // set before a deferred failure (timer fires at once)
  Call* prev = nullptr;
  Call* next = nullptr;

  static void OnDone(evhttp_request* req, void* arg);
  static void OnError(evhttp_request_error error, void* arg);
  static void OnChunk(evhttp_request* req, void* arg);
  static void OnTimer(int fd, short what, void* arg);
  void Fail(std::string text, bool cancel);
  void Complete(bool connection_reusable);
};

namespace {

bool IsConnected(evhttp_connection* conn) {
  bufferevent* bev = evhttp_connection_get_bufferevent(conn);
  int fd = bev != nullptr ? bufferevent_getfd(bev) : -1;
  if (fd < 0) return false;
  sockaddr_storage peer;
  socklen_t len = sizeof(peer);
  return getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0;
}

evhttp_cmd_type CommandFor(const std::string& method, bool* ok) {
  *ok = true;
  if (method == "GET") return EVHTTP_REQ_GET;
  if (method == "POST") return EVHTTP_REQ_POST;
  if (method == "HEAD") return EVHTTP_REQ_HEAD;
  if (method == "PUT") return EVHTTP_REQ_PUT;
  if (method == "DELETE") return EVHTTP_REQ_DELETE;
  *ok = false;
  return EVHTTP_REQ_GET;
}

timeval ToTimeval(uint64_t micros) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(micros / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(micros % 1000000);
  return tv;
}

}  // namespace

HttpClient::HttpClient(event_base* base, ClientOptions options)
    : base_(base), options_(options) {
  InitLibeventThreads();
  reaper_ = event_new(base_, -1, 0, &HttpClient::OnReap, this);
}

HttpClient::~HttpClient() {
  // Freeing a connection frees the requests queued on it without calling their
  // callbacks, which is the promise: nothing is called after destruction.
  while (calls_ != nullptr) {
    Call* call = calls_;
    calls_ = call->next;
    event_free(call->timer);
    if (call->conn != nullptr) evhttp_connection_free(call->conn);
    delete call;
  }
  for (auto& [label, pool] : pools_) {
    for (evhttp_connection* conn : pool->idle) evhttp_connection_free(conn);
  }
  for (evhttp_connection* conn : doomed_) evhttp_connection_free(conn);
  event_free(reaper_);
}

HttpClient::Pool* HttpClient::PoolFor(const HostPort& to) {
  std::string label = to.ToString();
  auto it = pools_.find(label);
  if (it != pools_.end()) return it->second.get();
  auto pool = std::make_unique<Pool>();
  pool->to = to;
  pool->label = label;
  Pool* raw = pool.get();
  pools_.emplace(std::move(label), std::move(pool));
  return raw;
}

size_t HttpClient::idle_connections(const HostPort& to) const {
  auto it = pools_.find(to.ToString());
  return it == pools_.end() ? 0 : it->second->idle.size();
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

void HttpClient::Request(const HostPort& to, std::string_view path_and_query,
                         RequestOptions options, ResponseCallback callback) {
  auto* call = new Call();
  call->client = this;
  call->pool = PoolFor(to);
  call->callback = std::move(callback);
  call->on_chunk = std::move(options.on_chunk);
  call->timeout_ms = options.timeout_ms;
  call->timer = event_new(base_, -1, 0, &Call::OnTimer, call);
  call->next = calls_;
  if (calls_ != nullptr) calls_->prev = call;
  calls_ = call;
  ++in_flight_;

  bool method_ok;
  evhttp_cmd_type command = CommandFor(options.method, &method_ok);
  std::string path(path_and_query);
  if (!method_ok || path.empty() || path[0] != '/') {
    call->Fail(call->pool->label + ": " +
                   (method_ok ? "request path '" + path + "' does not start with '/'"
                              : "unsupported method '" + options.method + "'"),
               false);
    return;
  }

  Pool* pool = call->pool;
  if (!pool->idle.empty()) {
    call->conn = pool->idle.back();
    pool->idle.pop_back();
  } else {
    call->conn = evhttp_connection_base_new(base_, nullptr, pool->to.host.c_str(),
                                            pool->to.port);
    if (call->conn == nullptr) {
      call->Fail(pool->label + ": cannot create a connection", false);
      return;
    }
    call->fresh = true;
    ++connections_opened_;
    evhttp_connection_set_retries(call->conn, 0);
  }
  timeval idle = ToTimeval(static_cast<uint64_t>(options_.idle_timeout_ms) * 1000);
  evhttp_connection_set_timeout_tv(call->conn, &idle);
  evhttp_connection_set_max_body_size(
      call->conn, call->on_chunk ? -1 : static_cast<ev_ssize_t>(options_.max_response_bytes));

  call->req = evhttp_request_new(&Call::OnDone, call);
  evhttp_request_set_error_cb(call->req, &Call::OnError);
  if (call->on_chunk) evhttp_request_set_chunked_cb(call->req, &Call::OnChunk);
  evkeyvalq* headers = evhttp_request_get_output_headers(call->req);
  bool has_host = false;
  for (const auto& [name, value] : options.headers) {
    has_host = has_host || strcasecmp(name.c_str(), "Host") == 0;
    evhttp_add_header(headers, name.c_str(), value.c_str());
  }
  if (!has_host) evhttp_add_header(headers, "Host", pool->label.c_str());
  if (!options.body.empty() || command == EVHTTP_REQ_POST || command == EVHTTP_REQ_PUT) {
    evhttp_add_header(headers, "Content-Length", std::to_string(options.body.size()).c_str());
    evbuffer_add(evhttp_request_get_output_buffer(call->req), options.body.data(),
                 options.body.size());
  }

  uint64_t now = MonotonicMicros();
  if (call->timeout_ms > 0) {
    call->deadline_micros = now + static_cast<uint64_t>(call->timeout_ms) * 1000;
  }
  uint64_t first = call->timeout_ms > 0 ? static_cast<uint64_t>(call->timeout_ms) * 1000 : 0;
  if (call->fresh && options_.connect_timeout_ms > 0) {
    uint64_t connect = static_cast<uint64_t>(options_.connect_timeout_ms) * 1000;
    if (first == 0 || connect < first) {
      first = connect;
      call->connect_check = true;
    }
  }
  if (first > 0) {
    timeval tv = ToTimeval(first);
    event_add(call->timer, &tv);
  }

  if (evhttp_make_request(call->conn, call->req, command, path.c_str()) != 0) {
    call->req = nullptr;  // evhttp freed it
    int err = errno;
    call->Fail(pool->label + ": " + (err == ECONNREFUSED ? "connection refused"
                                                         : "cannot connect: " + std::string(std::strerror(err))),
               false);
  }
}

// Finishes with a transport error. The callback never runs inside Request() or inside an
// evhttp call that could still touch the request, so failures go through the timer.
void HttpClient::Call::Fail(std::string text, bool cancel) {
  if (finished) return;
  if (cancel && req != nullptr) {
    evhttp_request* r = req;
    req = nullptr;
    finished = true;  // the callbacks evhttp may run from inside cancel are ignored
    evhttp_cancel_request(r);
    finished = false;
  }
  has_error = true;
  error = std::move(text);
  req = nullptr;
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
  if (call->connect_check) {
    call->connect_check = false;
    if (!IsConnected(call->conn)) {
      call->Fail(call->pool->label + ": connect timeout after " +
                     std::to_string(call->client->options_.connect_timeout_ms) + " ms",
                 true);
      return;
    }
    if (call->deadline_micros == 0) return;
    uint64_t now = MonotonicMicros();
    if (now < call->deadline_micros) {
      timeval tv = ToTimeval(call->deadline_micros - now);
      event_add(call->timer, &tv);
      return;
    }
  }
  call->Fail(call->pool->label + ": timeout after " + std::to_string(call->timeout_ms) + " ms",
             true);
}

void HttpClient::Call::OnError(evhttp_request_error error, void* arg) {
  auto* call = static_cast<Call*>(arg);
  if (call->finished || call->has_error) return;
  int err = errno;
  std::string text;
  switch (error) {
    case EVREQ_HTTP_TIMEOUT:
      text = "timeout: no data for " + std::to_string(call->client->options_.idle_timeout_ms) +
             " ms";
      break;
    case EVREQ_HTTP_EOF:
      text = err == ECONNREFUSED ? "connection refused"
                                 : "connection closed before a complete response";
      break;
    case EVREQ_HTTP_INVALID_HEADER:
      text = "invalid HTTP response";
      break;
    case EVREQ_HTTP_BUFFER_ERROR:
      text = err == ECONNREFUSED ? "connection refused"
                                 : std::string("connection error: ") + std::strerror(err);
      break;
    case EVREQ_HTTP_REQUEST_CANCEL:
      text = "request cancelled";
      break;
    case EVREQ_HTTP_DATA_TOO_LONG:
      text = "response body larger than " +
             std::to_string(call->client->options_.max_response_bytes) + " bytes";
      break;
  }
  // Evhttp frees the request itself after this; OnDone(nullptr) follows.
  call->req = nullptr;
  call->Fail(call->pool->label + ": " + text, false);
}

void HttpClient::Call::OnChunk(evhttp_request* req, void* arg) {
  auto* call = static_cast<Call*>(arg);
  if (call->finished || call->has_error) return;
  evbuffer* in = evhttp_request_get_input_buffer(req);
  int n = evbuffer_peek(in, -1, nullptr, nullptr, 0);
  std::vector<evbuffer_iovec> vec(static_cast<size_t>(n > 0 ? n : 0));
  if (n > 0) evbuffer_peek(in, -1, nullptr, vec.data(), n);
  for (const evbuffer_iovec& v : vec) {
    if (!call->on_chunk(std::string_view(static_cast<const char*>(v.iov_base), v.iov_len))) {
      // Cancelling from inside the chunk callback is allowed (evhttp defers the free).
      call->Fail(call->pool->label + ": aborted by receiver", true);
      return;
    }
  }
  // Evhttp drains the buffer after this callback.
}

void HttpClient::Call::OnDone(evhttp_request* req, void* arg) {
  auto* call = static_cast<Call*>(arg);
  if (call->finished || call->has_error) return;
  if (req == nullptr || evhttp_request_get_response_code(req) == 0) {
    // A failed connect (evhttp reports a refused loopback connect this way, with no
    // error callback) or a failure whose error callback did not run.
    int err = errno;
    call->req = nullptr;
    call->Fail(call->pool->label + ": " +
                   (err == ECONNREFUSED || req != nullptr ? "connection refused"
                                                          : "connection failed"),
               false);
    return;
  }
  HttpResponse& r = call->response;
  r.status = evhttp_request_get_response_code(req);
  evkeyvalq* headers = evhttp_request_get_input_headers(req);
  for (evkeyval* kv = headers->tqh_first; kv != nullptr; kv = kv->next.tqe_next) {
    r.headers.emplace_back(kv->key, kv->value);
  }
  evbuffer* in = evhttp_request_get_input_buffer(req);
  size_t n = evbuffer_get_length(in);
  if (call->on_chunk && n > 0) {
    // Whatever the chunk callback has not seen yet (evhttp may deliver the tail here).
    OnChunk(req, arg);
    if (call->has_error) return;
  } else if (n > 0) {
    r.body.resize(n);
    evbuffer_copyout(in, r.body.data(), n);
  }
  call->req = nullptr;  // evhttp frees it after this returns
  call->Complete(true);
}

// Calls the callback and forgets the call. The connection goes back to the pool after a
// complete response; after an error it is closed (soon: not from inside evhttp).
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
    if (connection_reusable && pool->idle.size() < c->options_.max_idle_per_host) {
      pool->idle.push_back(conn);
    } else {
      c->doomed_.push_back(conn);
      event_active(c->reaper_, EV_READ, 1);
    }
    conn = nullptr;
  }
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
  std::vector<evhttp_connection*> doomed;
  doomed.swap(self->doomed_);
  for (evhttp_connection* conn : doomed) evhttp_connection_free(conn);
}

}  // namespace clickatron::net
