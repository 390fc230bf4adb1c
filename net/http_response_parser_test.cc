#include "net/http_response_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace clickatron::net {
namespace {

using State = HttpResponseParser::State;

// Feeds bytes in pieces of `piece` bytes, keeping what Parse leaves unconsumed in front of
// the next piece, as the client's connection buffer does. Returns the final state and sets
// *leftover to the bytes after a complete response.
State Feed(HttpResponseParser* p, std::string_view bytes, size_t piece, std::string* leftover) {
  std::string buffer;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    buffer.append(bytes.substr(at, piece));
    std::string_view data(buffer);
    const State s = p->Parse(&data);
    if (s != State::kMore) {
      *leftover = std::string(data);
      return s;
    }
    buffer.erase(0, buffer.size() - data.size());
  }
  leftover->clear();
  return State::kMore;
}

struct Parsed {
  State state;
  HttpResponse response;
  std::string error;
  bool keep_alive;
  std::string leftover;
};

Parsed ParseAll(std::string_view bytes, size_t piece = 1 << 20, bool head = false,
                size_t max_bytes = 1 << 20) {
  HttpResponseParser p;
  p.Start(head, max_bytes, nullptr);
  Parsed r;
  r.state = Feed(&p, bytes, piece, &r.leftover);
  r.response = p.response();
  r.error = p.error();
  r.keep_alive = p.keep_alive();
  return r;
}

TEST(HttpResponseParser, ContentLengthBodyInAnyPieces) {
  const std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b \r\n\r\nhello";
  for (size_t piece : {1, 2, 3, 7, 100}) {
    Parsed r = ParseAll(bytes, piece);
    ASSERT_EQ(r.state, State::kComplete) << piece;
    EXPECT_EQ(r.response.status, 200);
    EXPECT_EQ(r.response.body, "hello");
    EXPECT_EQ(r.response.Header("x-a").value_or("?"), "b");
    EXPECT_TRUE(r.keep_alive);
    EXPECT_EQ(r.leftover, "");
  }
}

TEST(HttpResponseParser, ChunkedBodyWithExtensionsAndTrailers) {
  const std::string bytes =
      "HTTP/1.1 200 OK\nTransfer-Encoding: gzip, Chunked\n\n3;x=y\r\nabc\r\n2 \r\nde\r\n0\r\nT: 1\r\n\r\n";
  for (size_t piece : {1, 5, 1000}) {
    Parsed r = ParseAll(bytes, piece);
    ASSERT_EQ(r.state, State::kComplete) << piece;
    EXPECT_EQ(r.response.body, "abcde");
  }
}

TEST(HttpResponseParser, BodyUntilCloseAndHttp10) {
  HttpResponseParser p;
  p.Start(false, 1 << 20, nullptr);
  std::string_view data = "HTTP/1.0 200 OK\r\n\r\npart";
  EXPECT_EQ(p.Parse(&data), State::kMore);
  EXPECT_EQ(p.Close(), State::kComplete);
  EXPECT_EQ(p.response().body, "part");
  EXPECT_FALSE(p.keep_alive());
}

TEST(HttpResponseParser, CloseBeforeTheEndFails) {
  HttpResponseParser p;
  p.Start(false, 1 << 20, nullptr);
  std::string_view data = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\npart";
  EXPECT_EQ(p.Parse(&data), State::kMore);
  EXPECT_EQ(p.Close(), State::kFailed);
  EXPECT_EQ(p.error(), "connection closed before a complete response");
}

TEST(HttpResponseParser, InterimAnswersAreSkipped) {
  Parsed r = ParseAll("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.response.status, 404);
}

TEST(HttpResponseParser, HeadAnd204HaveNoBody) {
  Parsed head = ParseAll("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", 1 << 20, /*head=*/true);
  EXPECT_EQ(head.state, State::kComplete);
  EXPECT_EQ(head.response.body, "");
  Parsed none = ParseAll("HTTP/1.1 204 No Content\r\n\r\nextra");
  EXPECT_EQ(none.state, State::kComplete);
  EXPECT_EQ(none.leftover, "extra");  // the client then does not reuse the connection
}

TEST(HttpResponseParser, ConnectionCloseHeader) {
  Parsed r = ParseAll("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_FALSE(r.keep_alive);
}

TEST(HttpResponseParser, InvalidResponses) {
  for (std::string_view bytes :
       {"HTTP/2 200 OK\r\n", "HTTP/1.1 2x0 OK\r\n", "HTTP/1.1 099 Low\r\n", "garbage\r\n",
        "HTTP/1.1 200 OK\r\nno colon\r\n", "HTTP/1.1 200 OK\r\n: empty name\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n"}) {
    Parsed r = ParseAll(bytes);
    EXPECT_EQ(r.state, State::kFailed) << bytes;
    EXPECT_EQ(r.error, "invalid HTTP response") << bytes;
  }
}

TEST(HttpResponseParser, BodyLargerThanTheLimit) {
  Parsed declared = ParseAll("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", 1 << 20, false, 10);
  EXPECT_EQ(declared.state, State::kFailed);
  EXPECT_EQ(declared.error, "response body larger than 10 bytes");
  Parsed until_close = ParseAll("HTTP/1.1 200 OK\r\n\r\n0123456789a", 1 << 20, false, 10);
  EXPECT_EQ(until_close.state, State::kFailed);
  EXPECT_EQ(until_close.error, "response body larger than 10 bytes");
}

TEST(HttpResponseParser, StreamingHandsTheBodyOverAndMayAbort) {
  HttpResponseParser p;
  std::string got;
  p.Start(false, 1, [&](std::string_view chunk) {
    got.append(chunk);
    return got.size() < 100;
  });
  std::string_view data = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  EXPECT_EQ(p.Parse(&data), State::kComplete);  // the limit is for collected bodies
  EXPECT_EQ(got, "hello");
  EXPECT_EQ(p.response().body, "");

  p.Start(false, 1, [](std::string_view) { return false; });
  data = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  EXPECT_EQ(p.Parse(&data), State::kFailed);
  EXPECT_EQ(p.error(), "aborted by receiver");
}

TEST(HttpResponseParser, DirectBodyReceivesAPreallocatedBody) {
  HttpResponseParser p;
  p.Start(false, 1 << 20, nullptr);
  size_t space = 0;
  EXPECT_EQ(p.DirectBody(&space), nullptr);
  std::string_view data = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab";
  EXPECT_EQ(p.Parse(&data), State::kMore);
  char* into = p.DirectBody(&space);
  ASSERT_NE(into, nullptr);
  ASSERT_EQ(space, 2u);
  into[0] = 'c';
  EXPECT_EQ(p.DirectReceived(1), State::kMore);
  into = p.DirectBody(&space);
  ASSERT_EQ(space, 1u);
  into[0] = 'd';
  EXPECT_EQ(p.DirectReceived(1), State::kComplete);
  EXPECT_EQ(p.response().body, "abcd");
}

}  // namespace
}  // namespace clickatron::net
