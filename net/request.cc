#include "net/request.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include <cstdio>
#include <string>

#include "base/latency.h"
#include "net/http_server.h"
#include "net/json.h"
#include "net/server_loop.h"
#include "wire/refusals.h"

namespace clickatron::net {

const char* ReasonPhrase(int code) {
  switch (code) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
  }
}

// ---- Responder ----

namespace {

// Evhttp 2.1 sends a HEAD reply's body anyway (while leaving out its Content-Length),
// which corrupts a keep-alive connection. Keep the length, drop the bytes (a reference's
// release function runs now).
void StripBodyForHead(evhttp_request* req) {
  evbuffer* out = evhttp_request_get_output_buffer(req);
  size_t n = evbuffer_get_length(out);
  evkeyvalq* headers = evhttp_request_get_output_headers(req);
  if (evhttp_find_header(headers, "Content-Length") == nullptr) {
    evhttp_add_header(headers, "Content-Length", std::to_string(n).c_str());
  }
  evbuffer_drain(out, n);
}

}  // namespace

void Responder::AddHeader(const char* name, const char* value) {
  if (!CanReply()) return;
  evhttp_add_header(evhttp_request_get_output_headers(req_), name, value);
}

void Responder::Reply(int code, std::string_view body) {
  if (chunked_) return;  // a stream is ended with EndChunked
  if (!CanReply()) {
    Finish(code);
    return;
  }
  evbuffer_add(evhttp_request_get_output_buffer(req_), body.data(), body.size());
  Finish(code);
}

void Responder::ReplyReference(int code, const void* data, size_t length, ReleaseFn release,
                               void* arg) {
  if (!CanReply() || length == 0) {
    // Nothing will hold the bytes, so they are released now.
    release(data, length, arg);
    if (!chunked_) Finish(code);
    return;
  }
  evbuffer_add_reference(evhttp_request_get_output_buffer(req_), data, length, release, arg);
  Finish(code);
}

void Responder::ReplyJson(int code, std::string_view status_txt, std::string_view data_json) {
  AddHeader("Content-Type", "application/json");
  Reply(code, JsonEnvelope(code, status_txt, data_json));
}

void Responder::ReplyJsonError(int code, std::string_view status_txt, std::string_view message) {
  AddHeader("Content-Type", "application/json");
  Reply(code, JsonErrorEnvelope(code, status_txt, message));
}

// Hands the reply (body already in the output buffer) to evhttp. For an AsyncReply whose
// client is gone it frees evhttp's detached request instead: that is ours to free.
void Responder::Finish(int code) {
  if (replied_) return;
  replied_ = true;
  if (req_ == nullptr) return;
  if (async_) {
    static_cast<AsyncReply*>(this)->Detach();
    if (gone_) {
      evhttp_request_free(req_);
      req_ = nullptr;
      return;
    }
  }
  if (loop_ != nullptr) {
    uint64_t micros = MonotonicMicros() - start_micros_;
    if (route_ >= 0) loop_->Record(route_, micros);
    if (loop_->server()->options().log_requests) {
      std::fprintf(stderr, "%s %d %llu us\n", evhttp_request_get_uri(req_), code,
                   static_cast<unsigned long long>(micros));
    }
  }
  if (evhttp_request_get_command(req_) == EVHTTP_REQ_HEAD) StripBodyForHead(req_);
  evhttp_send_reply(req_, code, ReasonPhrase(code), nullptr);
  if (async_) req_ = nullptr;  // evhttp's now
}

// ---- Request ----

Method Request::method() const {
  switch (evhttp_request_get_command(req_)) {
    case EVHTTP_REQ_GET: return Method::kGet;
    case EVHTTP_REQ_POST: return Method::kPost;
    case EVHTTP_REQ_HEAD: return Method::kHead;
    case EVHTTP_REQ_PUT: return Method::kPut;
    case EVHTTP_REQ_DELETE: return Method::kDelete;
    case EVHTTP_REQ_OPTIONS: return Method::kOptions;
    default: return Method::kOther;
  }
}

namespace {

const char* MethodName(Method m) {
  switch (m) {
    case Method::kGet: return "GET";
    case Method::kPost: return "POST";
    case Method::kHead: return "HEAD";
    case Method::kPut: return "PUT";
    case Method::kDelete: return "DELETE";
    case Method::kOptions: return "OPTIONS";
    case Method::kOther: break;
  }
  return "OTHER";
}

}  // namespace

bool RequireMethod(Request& req, std::initializer_list<Method> allowed) {
  const Method m = req.method();
  for (Method a : allowed) {
    if (a == m) return true;
  }
  std::string allow, message = std::string(req.path()) + " takes ";
  size_t i = 0;
  for (Method a : allowed) {
    if (i > 0) allow += ", ";
    if (i > 0) message += i + 1 == allowed.size() ? " or " : ", ";
    allow += MethodName(a);
    message += MethodName(a);
    ++i;
  }
  req.AddHeader("Allow", allow.c_str());
  req.ReplyJsonError(405, wire::kMethodNotAllowed, message);
  return false;
}

std::string_view Request::body() {
  evbuffer* in = evhttp_request_get_input_buffer(req_);
  size_t n = evbuffer_get_length(in);
  if (n == 0) return {};
  const unsigned char* p = evbuffer_pullup(in, -1);
  return std::string_view(reinterpret_cast<const char*>(p), n);
}

const char* Request::Header(const char* name) const {
  return evhttp_find_header(evhttp_request_get_input_headers(req_), name);
}

int Request::loop_index() const { return loop_->index(); }

void Request::CountSecretRefusal(bool wrong_secret) {
  if (loop_ != nullptr) loop_->server()->CountSecretRefusal(wrong_secret);
}

event_base* Request::base() const { return loop_->base(); }

std::unique_ptr<AsyncReply> Request::Defer() {
  std::unique_ptr<AsyncReply> reply(new AsyncReply());
  reply->req_ = req_;
  reply->loop_ = loop_;
  reply->route_ = route_;
  reply->start_micros_ = start_micros_;
  deferred_ = true;
  replied_ = true;  // this Request must not answer any more
  // The connection's close callback is the loop's (server_loop.h); it tells the reply.
  if (conn_ != nullptr) {
    conn_->async = reply.get();
    reply->conn_ = conn_;
  }
  loop_->AddPending(reply.get());
  reply->linked_ = true;
  return reply;
}

// ---- AsyncReply ----

AsyncReply::~AsyncReply() {
  if (chunk_ != nullptr) evbuffer_free(chunk_);
  if (replied_) return;
  if (req_ == nullptr) return;  // abandoned by a stopped server
  if (gone_) {
    Detach();
    evhttp_request_free(req_);
    return;
  }
  if (!chunked_) {
    Reply(500, "no reply\n");
    return;
  }
  // Mid-stream: ending the stream cleanly would pass a truncated reply off as whole, so
  // the connection is closed instead (evhttp frees the request with it). Libevent itself
  // frees connections from inside their write callbacks, so this is safe from on_drained.
  evhttp_connection* conn = evhttp_request_get_connection(req_);
  Detach();
  evhttp_connection_free(conn);
  req_ = nullptr;
}

void AsyncReply::Detach() {
  if (linked_) {
    if (conn_ != nullptr && conn_->async == this) conn_->async = nullptr;
    conn_ = nullptr;
    loop_->RemovePending(this);
    linked_ = false;
  }
}

void AsyncReply::ClientGone() {
  // Evhttp calls this from evhttp_connection_free. If it detached our request first (the
  // client went away while we held it), the request is ours to free; otherwise evhttp
  // frees it with the connection right after this returns.
  if (req_ != nullptr && evhttp_request_get_connection(req_) != nullptr) req_ = nullptr;
  if (linked_) loop_->RemovePending(this);
  linked_ = false;
  gone_ = true;
  std::function<void()> fn = std::move(on_close_);
  if (fn) fn();  // may destroy this
}

void AsyncReply::Abandon() {
  // Called by a stopping loop before evhttp_free, with this already unlinked: evhttp_free
  // closes the connection and frees the request with it.
  linked_ = false;
  if (conn_ != nullptr && conn_->async == this) conn_->async = nullptr;
  conn_ = nullptr;
  if (req_ != nullptr && evhttp_request_get_connection(req_) != nullptr) req_ = nullptr;
  gone_ = true;
  loop_ = nullptr;
  std::function<void()> fn = std::move(on_close_);
  if (fn) fn();  // may destroy this
}

void AsyncReply::StartChunked(int code) {
  if (replied_ || chunked_) return;
  chunked_ = true;
  if (req_ == nullptr || gone_) return;
  evhttp_send_reply_start(req_, code, ReasonPhrase(code));
}

bool AsyncReply::SendChunk(std::string_view data, std::function<void()> on_drained) {
  if (req_ == nullptr || gone_ || replied_ || !chunked_) return false;
  if (chunk_ == nullptr) chunk_ = evbuffer_new();
  evbuffer_add(chunk_, data.data(), data.size());
  on_drained_ = std::move(on_drained);
  if (on_drained_) {
    evhttp_send_reply_chunk_with_cb(req_, chunk_, &AsyncReply::OnDrained, this);
  } else {
    evhttp_send_reply_chunk_with_cb(req_, chunk_, nullptr, nullptr);
  }
  return true;
}

void AsyncReply::OnDrained(evhttp_connection*, void* arg) {
  auto* self = static_cast<AsyncReply*>(arg);
  std::function<void()> fn = std::move(self->on_drained_);
  if (fn) fn();  // may destroy self
}

void AsyncReply::EndChunked() {
  if (replied_ || !chunked_) return;
  replied_ = true;
  if (req_ == nullptr) return;
  Detach();
  if (gone_) {
    evhttp_request_free(req_);
    req_ = nullptr;
    return;
  }
  if (loop_ != nullptr && route_ >= 0) loop_->Record(route_, MonotonicMicros() - start_micros_);
  evhttp_send_reply_end(req_);
  req_ = nullptr;
}

}  // namespace clickatron::net
