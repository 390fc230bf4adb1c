// Request and AsyncReply: what a server handler sees of one HTTP request, and how it
// answers — at once (Request) or later on the same loop (AsyncReply).
//
// A handler is called on the event loop that read the request with a Request& that lives
// only for that call. Everything a Request returns (path, query values, body, headers) is
// a view into evhttp's buffers or the loop's reusable scratch space: no allocation per
// request beyond what evhttp does, and nothing is valid after the handler returns. A
// handler that answers later copies what it needs first.
//
// The handler must do exactly one of these before returning:
//   * reply: Reply(), ReplyReference(), ReplyJson(), ReplyJsonError(); or
//   * Defer(): take an AsyncReply and answer through it later (same loop only).
// A handler that does neither gets a 500 sent for it (and a log line naming the path), so
// a forgotten reply is a visible bug rather than a hung client.
//
// Response headers (AddHeader) must be added before the reply. Content-Type defaults to
// "text/plain; charset=utf-8"; the JSON replies set "application/json".
//
// Client disconnects: a client may go away while an AsyncReply is pending or while a
// chunked reply streams. Evhttp stops reading a connection while its request is with the
// handler, so the disconnect is noticed when something is written to it: a chunk (then
// client_gone() turns true and the OnClose callback runs, so a stream stops producing) or
// the final reply (which then simply goes nowhere). Replying to a gone client does
// nothing and is safe. Evhttp's request is freed exactly once whatever happens, so
// nothing leaks; a reference given to ReplyReference is always released.
//
// Threading: a Request or AsyncReply is used only on its loop's thread. To finish an
// AsyncReply from work done on another thread, post back to the loop (LoopWaker).
#ifndef CLICKATRON_NET_REQUEST_H_
#define CLICKATRON_NET_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "net/query.h"

struct evbuffer;
struct evhttp_connection;
struct evhttp_request;
struct event_base;

namespace clickatron::net {

class ServerLoop;
class AsyncReply;
struct Connection;

enum class Method { kGet, kPost, kHead, kPut, kDelete, kOptions, kOther };

// The standard reason phrase for an HTTP status code ("OK", "Not Found", ...; "Unknown"
// for codes it does not know).
const char* ReasonPhrase(int code);

// Called once evhttp no longer needs bytes given by reference (sent, or the connection is
// gone): the owner may unpin them then. Runs on the loop thread.
using ReleaseFn = void (*)(const void* data, size_t length, void* arg);

// Reply operations shared by Request and AsyncReply. Not constructed directly.
class Responder {
 public:
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // Adds a response header. REQUIRES: before the reply; name and value hold no CR/LF.
  void AddHeader(const char* name, const char* value);

  // Replies with a copy of body.
  void Reply(int code, std::string_view body);
  // Replies with bytes the caller keeps alive until release(data, length, arg) is called
  // (e.g. a value inside an mmap'd file, pinned until sent). release is called exactly
  // once, also when the client is already gone.
  void ReplyReference(int code, const void* data, size_t length, ReleaseFn release,
                      void* arg);
  // Replies {"status_code": code, "status_txt": ..., "data": data_json} with HTTP status
  // code (docs/api.md#conventions). REQUIRES: data_json is one JSON value.
  void ReplyJson(int code, std::string_view status_txt, std::string_view data_json);
  // Replies {"status_code": code, "status_txt": ..., "data": null}.
  // The error envelope; message, when given, is the human detail ("line 3: ...").
  void ReplyJsonError(int code, std::string_view status_txt, std::string_view message = {});

  // True once a complete reply was handed to evhttp (or the request was abandoned).
  bool replied() const { return replied_; }

 protected:
  Responder() = default;
  ~Responder() = default;
  // Sends the reply held in the request's output buffer; records latency.
  void Finish(int code);

  evhttp_request* req_ = nullptr;  // null once evhttp's request is no longer ours
  ServerLoop* loop_ = nullptr;
  int route_ = -1;                 // index into the server's routes, -1 for "not found"
  uint64_t start_micros_ = 0;
  bool replied_ = false;
  bool gone_ = false;              // the client disconnected (or the server stopped)
  bool async_ = false;             // this is an AsyncReply
  bool chunked_ = false;           // a chunked reply was started (AsyncReply only)

 private:
  // A whole reply may still be given.
  bool CanReply() const { return req_ != nullptr && !gone_ && !replied_ && !chunked_; }
};

class Request : public Responder {
 public:
  Method method() const;
  // The request path before '?', exactly as sent (not percent-decoded), e.g. "/get/".
  std::string_view path() const { return path_; }
  // The raw query (after '?', before '#'), not decoded.
  std::string_view raw_query() const { return raw_query_; }
  // The decoded query parameters; query().status() says whether decoding succeeded
  // (see query.h: bad percent-encoding is an error the handler reports as 400).
  const Query& query() const { return *query_; }
  const std::vector<QueryParam>& params() const { return query_->params(); }
  std::optional<std::string_view> Param(std::string_view name) const {
    return query_->Get(name);
  }
  // The request body, made contiguous (empty for a GET). At most the server's
  // max_body_bytes: larger bodies are answered 413 by evhttp before any handler runs.
  std::string_view body();
  // A request header (case-insensitive name), or nullptr.
  const char* Header(const char* name) const;

  // Counts this request in its server's secret refusals (/stats limits; net/secret.h).
  void CountSecretRefusal(bool wrong_secret);

  // Which of the server's loops runs this request (0..threads-1), for per-thread state.
  int loop_index() const;
  event_base* base() const;
  // Evhttp's request, for anything this wrapper does not cover. Do not reply through it.
  evhttp_request* raw() const { return req_; }

  // Takes over the reply: the handler returns without replying and answers through the
  // returned AsyncReply later, on this loop. Response headers added so far are kept.
  // REQUIRES: not replied yet; at most once.
  std::unique_ptr<AsyncReply> Defer();

 private:
  friend class ServerLoop;
  Request() = default;
  ~Request() = default;

  std::string_view path_;
  std::string_view raw_query_;
  const Query* query_ = nullptr;
  Connection* conn_ = nullptr;  // the limits' record of the connection (server_loop.h)
  bool deferred_ = false;
};

// The one home of 405 (docs/api.md#conventions): true when the request's method is one of
// `allowed`. Otherwise replies 405 METHOD_NOT_ALLOWED (the JSON error envelope, message
// "<path> takes GET or POST") with an Allow header naming them ("GET, POST"), and returns
// false: the handler then returns without replying again (counting the refusal if it
// counts refusals). REQUIRES: allowed is not empty; not replied yet.
bool RequireMethod(Request& req, std::initializer_list<Method> allowed);

// A reply that will be given later, on the request's loop. Own it (unique_ptr) until you
// reply; it may outlive the client's connection and even the server's loops (after the
// server stops, every call is a no-op).
class AsyncReply : public Responder {
 public:
  // If no complete reply was given: a client still connected gets 500 "no reply" (or,
  // mid-chunked-stream, its connection is closed so it sees a truncated response).
  ~AsyncReply();

  // True once the client has gone (closed its connection, timed out) or the server
  // stopped. Replies then do nothing (a reference's release function still runs).
  bool client_gone() const { return gone_; }

  // fn runs once, on the loop, when the client goes away (or the server stops) before the
  // reply is complete. Not run after a complete reply, nor by the destructor. fn may
  // destroy this AsyncReply.
  void SetOnClose(std::function<void()> fn) { on_close_ = std::move(fn); }

  // Chunked streaming (Transfer-Encoding: chunked), for replies too large to build in
  // memory: StartChunked, then SendChunk as data is produced, then EndChunked.
  // REQUIRES: no other reply given.
  void StartChunked(int code);
  // Queues data (copied) as one chunk. on_drained, if given, runs on the loop once
  // everything queued so far has been written to the socket: produce the next chunk then,
  // so memory stays bounded by one chunk. It is not run if the client goes away (OnClose
  // runs instead). Returns false (and queues nothing) if the client is gone.
  // on_drained may destroy this AsyncReply.
  bool SendChunk(std::string_view data, std::function<void()> on_drained = {});
  // Ends the stream (the zero-length chunk); the reply is then complete.
  void EndChunked();

 private:
  friend class Request;
  friend class Responder;
  friend class ServerLoop;
  AsyncReply() { async_ = true; }
  static void OnDrained(evhttp_connection* conn, void* arg);
  void Detach();        // leaves the loop's pending list, clears the close callback
  void ClientGone();    // the connection closed before the reply was complete
  void Abandon();       // the server stopped

  std::function<void()> on_close_;
  std::function<void()> on_drained_;
  evbuffer* chunk_ = nullptr;   // reused for every SendChunk
  Connection* conn_ = nullptr;  // its connection, which tells us when it closes
  bool linked_ = false;         // on the loop's pending list
  AsyncReply* prev_ = nullptr;  // the loop's list of pending replies
  AsyncReply* next_ = nullptr;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_REQUEST_H_
