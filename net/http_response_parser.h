// HttpResponseParser: how the HTTP client (http_client.h) reads one response from the bytes
// a server sends — the status line, the headers, and a body framed by Content-Length,
// chunked encoding or the server's close (RFC 7230 3.3.3). Pure code, no sockets: the client
// feeds it what recv() returned, and tests and fuzz/http_response_fuzz.cc feed it bytes.
//
//   HTTP/1.1 200 OK                   "HTTP/1.x NNN ...", NNN >= 100; 1xx other than 101 are
//   Content-Length: 5                 interim answers (100 Continue): skipped, the next
//                                     status line follows
//   hello                             HEAD, 204 and 304 have no body; otherwise chunked
//                                     (Transfer-Encoding holds "chunked"), else
//                                     Content-Length (decimal digits only), else until close
//
// Lines end in CRLF or a bare LF. A body is collected in response().body (at once when
// Content-Length is at most 4 MiB: the client then receives straight into it, DirectBody),
// or handed to on_chunk as it arrives when streaming. Errors are values: "invalid HTTP
// response", "response body larger than N bytes", "aborted by receiver", "connection
// closed before a complete response" (the client prefixes "host:port: ").
//
// Feed bytes in pieces cut anywhere: Parse() consumes what it can from the front of *data
// and leaves an incomplete line (status, header, chunk size) there, to be presented again
// with the bytes that follow it. One parser reads one response; Start() readies it for the
// next. Not thread-safe.
#ifndef CLICKATRON_NET_HTTP_RESPONSE_PARSER_H_
#define CLICKATRON_NET_HTTP_RESPONSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "net/http_client.h"

namespace clickatron::net {

class HttpResponseParser {
 public:
  enum class State {
    kMore,      // needs more bytes
    kComplete,  // a whole response; bytes after it stay in *data (none are expected)
    kFailed,    // error() says why; the connection cannot be reused
  };

  // Readies the parser for the response to a request. head: the request was HEAD (no body
  // whatever the headers say). max_response_bytes: a larger collected body fails (not
  // checked when streaming). on_chunk: when set, body bytes go to it instead of the body;
  // returning false fails the response ("aborted by receiver").
  void Start(bool head, size_t max_response_bytes,
             std::function<bool(std::string_view chunk)> on_chunk);

  // Parses the front of *data, removing the bytes it consumed.
  State Parse(std::string_view* data);
  // The server closed the connection: kComplete for a body framed by the close, else
  // kFailed ("connection closed before a complete response").
  State Close();

  // Where the next body bytes may be received directly (a preallocated body, nothing
  // buffered before it), with room for *space bytes; nullptr otherwise.
  char* DirectBody(size_t* space);
  // n bytes were received at DirectBody(): kComplete when the body is whole, else kMore.
  State DirectReceived(size_t n);

  HttpResponse& response() { return response_; }
  const std::string& error() const { return error_; }
  // Whether the connection may carry another request after this response.
  bool keep_alive() const { return keep_alive_; }

 private:
  enum class Phase { kStatus, kHeaders, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kUntilClose };

  // The steps of Parse, one per phase; each returns kMore to go on.
  State Line(std::string_view line);
  State StatusLine(std::string_view line);
  State HeaderLine(std::string_view line);
  State ChunkSizeLine(std::string_view line);
  State BodyBytes(std::string_view* data);
  State Fail(std::string text);
  State StartBody();
  bool Body(std::string_view bytes);  // false after Fail

  HttpResponse response_;
  std::function<bool(std::string_view)> on_chunk_;
  size_t max_response_bytes_ = 0;
  bool head_ = false;
  Phase phase_ = Phase::kStatus;
  uint64_t remaining_ = 0;   // body bytes (kBody, kChunkData) still expected
  size_t body_filled_ = 0;   // bytes of a preallocated body already received
  bool preallocated_ = false;
  bool keep_alive_ = true;
  std::string error_;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_HTTP_RESPONSE_PARSER_H_
