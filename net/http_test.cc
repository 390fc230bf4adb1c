// Server, client, fetch and waker over real sockets on 127.0.0.1, including malformed and
// abandoned requests. Every test runs under ASan (leaks included) in the sanitizer build.
#include <arpa/inet.h>
#include <event2/event.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/fetch.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/json.h"
#include "net/loop_waker.h"
#include "net/stats_writer.h"
#include "net/test_server.h"

namespace clickatron::net {
namespace {

using namespace std::chrono_literals;

int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (e.g. after a 413)
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until the server closes the connection or `until` returns true (or 10 s pass).
std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& until) {
  std::string got;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline && !until(got)) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

size_t CountOf(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Sends raw bytes on a new connection and returns everything until the server closes.
std::string Raw(uint16_t port, std::string_view bytes) {
  int fd = Connect(port);
  SendAll(fd, bytes);
  std::string got = ReadUntil(fd, [](const std::string&) { return false; });
  close(fd);
  return got;
}

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

std::string Body(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// Runs an event loop on the test thread until done() or 10 s.
void RunUntil(event_base* base, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(done()) << "event loop did not finish in time";
}

void EchoRoutes(Server& s) {
  s.Handle("/ping", [](Request& r) { r.Reply(200, "OK"); });
  s.Handle("/get", [](Request& r) {
    if (!r.query().status().ok()) {
      r.Reply(400, r.query().status().message());
      return;
    }
    std::string out(r.path());
    for (const QueryParam& p : r.params()) {
      out += "|" + std::string(p.name) + "=" + std::string(p.value);
    }
    r.AddHeader("X-Archive-Last-Day", "2012-03-25");
    r.Reply(200, out);
  }, {.trailing_slash_alias = true});
  s.Handle("/body", [](Request& r) {
    r.Reply(200, std::to_string(r.body().size()) + ":" + std::string(r.body().substr(0, 16)));
  });
  s.Handle("/json", [](Request& r) {
    if (!r.Param("key")) {
      r.ReplyJsonError(400, "MISSING_ARG_KEY");
      return;
    }
    std::string data;
    JsonWriter w(&data);
    w.BeginObject();
    w.Key("key");
    w.String(*r.Param("key"));
    w.EndObject();
    r.ReplyJson(200, "OK", data);
  });
}

// ---- server: routing, parameters, limits, malformed requests ----

TEST(HttpServer, PrefixRoutes) {
  TestServer t([](Server& s) {
    s.Handle("/", [](Request& r) { r.Reply(200, "root"); });
    s.Handle("/files/", [](Request& r) { r.Reply(200, "file " + std::string(r.path())); }, {.prefix = true});
  });
  EXPECT_EQ(Body(Raw(t.port(), "GET /files/a/b.js?x=1 HTTP/1.0\r\n\r\n")), "file /files/a/b.js");
  EXPECT_EQ(Body(Raw(t.port(), "GET /files/ HTTP/1.0\r\n\r\n")), "file /files/");
  EXPECT_EQ(Body(Raw(t.port(), "GET /files/../x HTTP/1.0\r\n\r\n")), "file /files/../x");  // as sent
  EXPECT_EQ(Body(Raw(t.port(), "GET / HTTP/1.0\r\n\r\n")), "root");  // "/" is exact
  EXPECT_EQ(StatusLine(Raw(t.port(), "GET /files HTTP/1.0\r\n\r\n")), "HTTP/1.0 404 Not Found");
  EXPECT_EQ(StatusLine(Raw(t.port(), "GET /other HTTP/1.0\r\n\r\n")), "HTTP/1.0 404 Not Found");
}

TEST(HttpServer, RoutesAliasesAndParams) {
  TestServer t(EchoRoutes);
  std::string r = Raw(t.port(), "GET /get?key=u%7Cjehiah&key=a%2Bb&k=a+b HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 200 OK");
  EXPECT_NE(r.find("X-Archive-Last-Day: 2012-03-25\r\n"), std::string::npos);
  EXPECT_NE(r.find("Content-Type: text/plain; charset=utf-8\r\n"), std::string::npos);
  EXPECT_EQ(Body(r), "/get|key=u|jehiah|key=a+b|k=a b");
  r = Raw(t.port(), "GET /get/?key=x HTTP/1.0\r\n\r\n");
  EXPECT_EQ(Body(r), "/get/|key=x");
  r = Raw(t.port(), "GET /get//?key=x HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 404 Not Found");
  EXPECT_EQ(Body(r), "not found\n");
  r = Raw(t.port(), "GET http://127.0.0.1/get?key=abs HTTP/1.0\r\n\r\n");  // absolute form
  EXPECT_EQ(Body(r), "/get|key=abs");
  r = Raw(t.port(), "GET /ping/ HTTP/1.0\r\n\r\n");  // no alias on /ping
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 404 Not Found");
  r = Raw(t.port(), "GET /json?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 400 Bad Request");
  EXPECT_NE(r.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(Body(r), "{\"status_code\": 400, \"status_txt\": \"MISSING_ARG_KEY\", \"data\": null}");
  r = Raw(t.port(), "GET /json?key=%22%5C%01%C3%A9%FF HTTP/1.0\r\n\r\n");
  EXPECT_EQ(Body(r), "{\"status_code\": 200, \"status_txt\": \"OK\", \"data\": "
                     "{\"key\":\"\\\"\\\\\\u0001\xc3\xa9\\ufffd\"}}");
}

// RequireMethod is every server's 405: the Allow header names the methods, the envelope
// names the error, and the handler's own reply is never reached.
TEST(HttpServer, RequireMethodAnswers405WithAllowAndTheNamedError) {
  TestServer t([](Server& s) {
    s.Handle("/w", [](Request& r) {
      if (!RequireMethod(r, {Method::kGet, Method::kPost})) return;
      r.Reply(200, "ran");
    });
    s.Handle("/p", [](Request& r) {
      if (!RequireMethod(r, {Method::kPost})) return;
      r.Reply(200, "ran");
    });
  });
  EXPECT_EQ(Body(Raw(t.port(), "GET /w HTTP/1.0\r\n\r\n")), "ran");
  EXPECT_EQ(Body(Raw(t.port(), "POST /w HTTP/1.0\r\nContent-Length: 0\r\n\r\n")), "ran");
  std::string r = Raw(t.port(), "PUT /w HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 405 Method Not Allowed");
  EXPECT_NE(r.find("\r\nAllow: GET, POST\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(Body(r), "{\"status_code\": 405, \"status_txt\": \"METHOD_NOT_ALLOWED\", \"data\": null, "
                     "\"message\": \"/w takes GET or POST\"}");
  r = Raw(t.port(), "GET /p HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 405 Method Not Allowed");
  EXPECT_NE(r.find("\r\nAllow: POST\r\n"), std::string::npos) << r;
  EXPECT_NE(Body(r).find("\"message\": \"/p takes POST\""), std::string::npos) << Body(r);
}

TEST(HttpServer, BadPercentEncodingIsA400TheHandlerWrites) {
  TestServer t(EchoRoutes);
  std::string r = Raw(t.port(), "GET /get?key=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(Body(r), "bad percent-encoding in query parameter 'key'");
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpServer, LongUrlGets414AndHugeUrlIsRefused) {
  TestServer t(EchoRoutes);
  std::string url = "/get?key=" + std::string(20 * 1024, 'a');
  std::string r = Raw(t.port(), "GET " + url + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.1 414 URI Too Long");
  EXPECT_EQ(Body(r), "URL longer than 8192 bytes\n");
  // Past URL + header limits evhttp refuses the request line itself.
  url = "/get?key=" + std::string(64 * 1024, 'a');
  r = Raw(t.port(), "GET " + url + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(r.empty() || StatusLine(r).substr(9, 3) == "413" || StatusLine(r).substr(9, 3) == "400")
      << StatusLine(r);
  // A URL exactly at the limit is served.
  url = "/get?k=" + std::string(8192 - 7, 'b');
  r = Raw(t.port(), "GET " + url + " HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusLine(r), "HTTP/1.0 200 OK");
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpServer, HugeHeadersAreRefused) {
  TestServer t(EchoRoutes);
  std::string r = Raw(t.port(), "GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                     std::string(40 * 1024, 'h') + "\r\n\r\n");
  EXPECT_TRUE(r.empty() || StatusLine(r).find(" 200 ") == std::string::npos) << StatusLine(r);
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpServer, BodyOverTheLimitGets413) {
  ServerOptions o;
  o.max_body_bytes = 1000;
  TestServer t(EchoRoutes, o);
  std::string ok = Raw(t.port(), "POST /body HTTP/1.0\r\nContent-Length: 1000\r\n\r\n" +
                                     std::string(1000, 'z'));
  EXPECT_EQ(StatusLine(ok), "HTTP/1.0 200 OK");
  EXPECT_EQ(Body(ok), "1000:zzzzzzzzzzzzzzzz");
  std::string r = Raw(t.port(), "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n" +
                                    std::string(1001, 'z'));
  EXPECT_EQ(StatusLine(r), "HTTP/1.1 413 Request Entity Too Large");  // evhttp's words
  // Chunked uploads are counted too.
  r = Raw(t.port(), "POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "400\r\n" + std::string(1024, 'c') + "\r\n0\r\n\r\n");
  EXPECT_EQ(StatusLine(r).substr(0, 12), "HTTP/1.1 413");
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpServer, ClientsClosingMidRequestDoNotHurt) {
  TestServer t(EchoRoutes);
  for (std::string_view partial :
       {"GET /get?key=a HTTP/1.1\r\nHost:", "GET /get?ke", "POST /body HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 100000\r\n\r\nonly a little", "\x16\x03\x01\x02\x00garbage"}) {
    int fd = Connect(t.port());
    SendAll(fd, partial);
    close(fd);
  }
  // Garbage and bad request lines get an error reply or a close, never a crash.
  std::string r = Raw(t.port(), "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(r.find(" 200 "), std::string::npos);
  r = Raw(t.port(), "BREW /ping HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.find(" 200 "), std::string::npos);
  r = Raw(t.port(), "GET /ping HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n");
  EXPECT_EQ(r.find(" 200 "), std::string::npos);
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpServer, KeepAliveAndPipelining) {
  TestServer t(EchoRoutes);
  int fd = Connect(t.port());
  // Three pipelined requests in one write: answered in order on the one connection.
  SendAll(fd, "GET /get?key=1 HTTP/1.1\r\nHost: x\r\n\r\n"
              "GET /get?key=2 HTTP/1.1\r\nHost: x\r\n\r\n"
              "GET /get?key=3 HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got = ReadUntil(fd, [](const std::string& s) { return CountOf(s, "/get|key=") == 3; });
  EXPECT_EQ(CountOf(got, "HTTP/1.1 200 OK"), 3u);
  size_t a = got.find("/get|key=1"), b = got.find("/get|key=2"), c = got.find("/get|key=3");
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  // And more requests on the same connection later.
  for (int i = 0; i < 5; ++i) {
    SendAll(fd, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    got = ReadUntil(fd, [](const std::string& s) { return s.find("\r\n\r\nOK") != std::string::npos; });
    EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
  }
  close(fd);
}

TEST(HttpServer, IdleConnectionsAreClosed) {
  ServerOptions o;
  o.limits.idle_timeout_ms = 1000;
  TestServer t(EchoRoutes, o);
  int fd = Connect(t.port());
  auto start = std::chrono::steady_clock::now();
  std::string got = ReadUntil(fd, [](const std::string&) { return false; });
  EXPECT_EQ(got, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  close(fd);
}

// Polls f() until it is true or 10 s pass.
bool Eventually(const std::function<bool()>& f) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return f();
}

TEST(HttpLimits, SlowRequestIsCutAtTheDeadlineWhileOthersAreServed) {
  ServerOptions o;
  o.limits.request_timeout_ms = 600;
  TestServer t(EchoRoutes, o);
  int slow = Connect(t.port());
  auto start = std::chrono::steady_clock::now();
  std::string got;
  // One byte every 100 ms: evhttp's inactivity timer alone would never fire.
  const std::string request = "GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  for (size_t i = 0; i < request.size() - 2; ++i) {
    if (send(slow, &request[i], 1, MSG_NOSIGNAL) != 1) break;
    // Another client is served meanwhile.
    if (i == 3) {
      EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
    }
    pollfd p{slow, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) break;  // the server answered (and closes)
  }
  got = ReadUntil(slow, [](const std::string&) { return false; });
  const auto took = std::chrono::steady_clock::now() - start;
  close(slow);
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 408 Request Timeout");
  EXPECT_EQ(Body(got), "REQUEST_TIMEOUT\n");
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(t.server().Stats().request_timeouts, 1u);
  EXPECT_TRUE(Eventually([&] { return t.server().Stats().open_connections == 0; }));
}

TEST(HttpLimits, KeepAliveRequestsEachGetAFreshDeadline) {
  ServerOptions o;
  o.limits.request_timeout_ms = 300;
  TestServer t(EchoRoutes, o);
  int fd = Connect(t.port());
  // Requests 200 ms apart on one connection: 1 s in all, each one quick.
  for (int i = 0; i < 5; ++i) {
    SendAll(fd, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string got = ReadUntil(fd, [](const std::string& s) { return s.find("\r\n\r\nOK") != std::string::npos; });
    EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
    std::this_thread::sleep_for(200ms);
  }
  close(fd);
  EXPECT_EQ(t.server().Stats().request_timeouts, 0u);
}

TEST(HttpLimits, ConnectionsBeyondTheCapAreRefusedAtOnce) {
  ServerOptions o;
  o.limits.max_connections = 3;
  TestServer t(EchoRoutes, o);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(Connect(t.port()));
  ASSERT_TRUE(Eventually([&] { return t.server().Stats().open_connections == 3; }));
  // The fourth is answered 503 and closed, without being read.
  std::string got = Raw(t.port(), "");
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 503 Service Unavailable");
  EXPECT_EQ(Body(got), "TOO_MANY_CONNECTIONS\n");
  EXPECT_EQ(t.server().Stats().refused_connections, 1u);
  // The held ones are still served.
  SendAll(held[0], "GET /ping HTTP/1.0\r\n\r\n");
  EXPECT_EQ(Body(ReadUntil(held[0], [](const std::string&) { return false; })), "OK");
  for (int fd : held) close(fd);
  ASSERT_TRUE(Eventually([&] { return t.server().Stats().open_connections == 0; }));
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
}

TEST(HttpLimits, InflightBodyBudgetRefusesWithServiceUnavailable) {
  ServerOptions o;
  o.max_body_bytes = 1 << 20;
  o.limits.max_inflight_body_bytes = 256 * 1024;
  TestServer t(EchoRoutes, o);
  // Two requests announcing 200 KB each: the first fits, the second goes over once its
  // bytes arrive.
  const std::string head = "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n";
  int a = Connect(t.port());
  SendAll(a, head + std::string(150000, 'a'));
  ASSERT_TRUE(Eventually([&] { return t.server().Stats().inflight_body_bytes >= 150000; }));
  int b = Connect(t.port());
  SendAll(b, head + std::string(150000, 'b'));
  std::string got = ReadUntil(b, [](const std::string&) { return false; });
  close(b);
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 503 Service Unavailable");
  EXPECT_EQ(Body(got), "BODY_BUDGET_EXCEEDED\n");
  // The first completes; afterwards nothing is in flight.
  SendAll(a, std::string(50000, 'a'));
  got = ReadUntil(a, [](const std::string& s) { return s.find("200000:") != std::string::npos; });
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
  close(a);
  EXPECT_EQ(t.server().Stats().budget_refusals, 1u);
  EXPECT_TRUE(Eventually([&] { return t.server().Stats().inflight_body_bytes == 0; }));
}

TEST(HttpLimits, OversizedBodyIsNotCountedInTheBudget) {
  ServerOptions o;
  o.max_body_bytes = 1000;
  o.limits.max_inflight_body_bytes = 64 * 1024;
  TestServer t(EchoRoutes, o);
  // 300 KB announced and sent: evhttp answers 413 and drops the bytes; the budget, far
  // smaller, refuses nothing.
  std::string got = Raw(t.port(), "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n" +
                                      std::string(300000, 'x'));
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 413 Request Entity Too Large");
  EXPECT_EQ(t.server().Stats().budget_refusals, 0u);
  EXPECT_TRUE(Eventually([&] { return t.server().Stats().inflight_body_bytes == 0; }));
}

TEST(HttpLimits, StatsFields) {
  ServerOptions o;
  o.limits.max_connections = 7;
  TestServer t(EchoRoutes, o);
  EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
  ASSERT_TRUE(Eventually([&] { return t.server().Stats().open_connections == 0; }));
  std::string out;
  StatsWriter w(&out, nullptr);
  w.BeginObject();
  t.server().WriteLimitFields(&w);
  w.EndObject();
  EXPECT_EQ(out,
            "{\"max_connections\":7,\"request_timeout_ms\":30000,\"idle_timeout_ms\":60000,"
            "\"max_body_bytes\":1048576,\"max_inflight_body_bytes\":67108864,"
            "\"open_connections\":0,\"accepted_connections\":1,\"refused_connections\":0,"
            "\"request_timeouts\":0,\"budget_refusals\":0,\"inflight_body_bytes\":0,"
            "\"accept_errors\":0,\"secret_missing\":0,\"secret_wrong\":0}");
}

TEST(HttpServer, ForgottenReplyIs500AndThrowIs500) {
  TestServer t([](Server& s) {
    s.Handle("/forget", [](Request&) {});
    s.Handle("/throw", [](Request&) { throw std::runtime_error("boom"); });
  });
  EXPECT_EQ(StatusLine(Raw(t.port(), "GET /forget HTTP/1.0\r\n\r\n")),
            "HTTP/1.0 500 Internal Server Error");
  EXPECT_EQ(StatusLine(Raw(t.port(), "GET /throw HTTP/1.0\r\n\r\n")),
            "HTTP/1.0 500 Internal Server Error");
}

TEST(HttpServer, ReplyReferenceReleasesOnceSentOrAbandoned) {
  static std::atomic<int> released{0};
  static const char kData[] = "mapped bytes";
  released = 0;
  TestServer t([](Server& s) {
    s.Handle("/ref", [](Request& r) {
      r.ReplyReference(200, kData, sizeof(kData) - 1,
                       [](const void* data, size_t len, void*) {
                         EXPECT_EQ(data, kData);
                         EXPECT_EQ(len, sizeof(kData) - 1);
                         released.fetch_add(1);
                       },
                       nullptr);
    });
  });
  EXPECT_EQ(Body(Raw(t.port(), "GET /ref HTTP/1.0\r\n\r\n")), "mapped bytes");
  EXPECT_EQ(Body(Raw(t.port(), "GET /ref HTTP/1.0\r\n\r\n")), "mapped bytes");
  t.Stop();
  EXPECT_EQ(released.load(), 2);
}

TEST(HttpServer, SeveralLoopsShareThePort) {
  ServerOptions o;
  o.threads = 2;
  std::atomic<int> seen_loop[2] = {0, 0};
  TestServer t([&](Server& s) {
    s.Handle("/ping", [&](Request& r) {
      seen_loop[r.loop_index()].fetch_add(1);
      r.Reply(200, "OK");
    });
  }, o);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
  }
  EXPECT_EQ(seen_loop[0] + seen_loop[1], 40);
  EXPECT_GT(seen_loop[0], 0);  // SO_REUSEPORT hashes 40 source ports over both loops
  EXPECT_GT(seen_loop[1], 0);
  EXPECT_EQ(t.server().Latency()[0].latency.count(), 40u);
}

TEST(HttpServer, SecondServerOnTheSamePortFails) {
  TestServer t(EchoRoutes);
  ServerOptions o;
  o.port = t.port();
  o.handle_signals = false;
  Server second(o);
  Status s = second.Listen();
  EXPECT_EQ(s.message(), "127.0.0.1:" + std::to_string(t.port()) + ": Address already in use");
}

TEST(HttpServer, LatencyPerRoute) {
  TestServer t(EchoRoutes);
  for (int i = 0; i < 3; ++i) Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n");
  Raw(t.port(), "GET /get/?key=1 HTTP/1.0\r\n\r\n");
  Raw(t.port(), "GET /nothing HTTP/1.0\r\n\r\n");
  std::vector<RouteLatency> l = t.server().Latency();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].path, "/ping");
  EXPECT_EQ(l[0].latency.count(), 3u);
  EXPECT_EQ(l[1].path, "/get");
  EXPECT_EQ(l[1].latency.count(), 1u);
  EXPECT_EQ(l[2].latency.count(), 0u);
  std::string json;
  StatsWriter w(&json, nullptr);
  t.server().WriteLatencyJson(&w);
  EXPECT_EQ(json.substr(0, 27), "{\"/ping\":{\"count\":3,\"p50_us");
  EXPECT_NE(json.find("\"/json\":{\"count\":0,\"p50_us\":0,\"p99_us\":0,\"p999_us\":0,\"max_us\":0}"),
            std::string::npos);
}

TEST(HttpServer, SighupAndStopBeforeRun) {
  std::atomic<int> hups{0};
  {
    TestServer t([&](Server& s) {
      EchoRoutes(s);
      s.OnSighup([&] { hups.fetch_add(1); });
    });
    t.server().TriggerSighup();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (hups.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(hups.load(), 1);
  }
  ServerOptions o;
  o.handle_signals = false;
  Server s(o);
  ASSERT_TRUE(s.Listen().ok());
  s.Stop();
  s.Run();  // returns at once
}

int OpenFds() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

TEST(HttpServer, NoDescriptorLeftBehind) {
  int before = OpenFds();
  for (int threads : {1, 2}) {
    ServerOptions o;
    o.threads = threads;
    TestServer t(EchoRoutes, o);
    EXPECT_EQ(Body(Raw(t.port(), "GET /ping HTTP/1.0\r\n\r\n")), "OK");
    int idle = Connect(t.port());  // left open: the server closes its side at stop
    t.Stop();
    close(idle);
  }
  EXPECT_EQ(OpenFds(), before);
}

// ---- server: deferred (async) replies and streams ----

struct Deferred {
  std::mutex mu;
  std::vector<std::unique_ptr<AsyncReply>> replies;  // loop thread only, mu for the test
  std::atomic<int> closed{0};
};

TEST(HttpServer, DeferredReplyAnsweredLaterFromAnotherThreadViaWaker) {
  std::unique_ptr<AsyncReply> held;
  std::unique_ptr<LoopWaker> waker;
  std::atomic<bool> deferred{false};
  TestServer t([&](Server& s) {
    s.Handle("/later", [&](Request& r) {
      held = r.Defer();
      held->AddHeader("X-Later", "yes");
      deferred = true;
    });
  });
  // The waker lives on the server's loop; built there (construction is loop-thread only).
  std::atomic<bool> built{false};
  LoopWaker* builder_target = nullptr;
  (void)builder_target;
  waker = std::make_unique<LoopWaker>(t.server().base(), [&] {
    if (held) {
      held->Reply(202, "done later");
      held.reset();
    }
  });
  built = true;
  int fd = Connect(t.port());
  SendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!deferred && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  std::thread([&] { waker->Wake(); }).join();
  std::string got = ReadUntil(fd, [](const std::string& s) { return s.find("done later") != std::string::npos; });
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 202 Accepted");
  EXPECT_NE(got.find("X-Later: yes\r\n"), std::string::npos);
  close(fd);
  t.Stop();
  waker.reset();
}

TEST(HttpServer, ClientGoneBeforeDeferredReply) {
  Deferred d;
  TestServer t([&](Server& s) {
    s.Handle("/later", [&](Request& r) {
      auto reply = r.Defer();
      reply->SetOnClose([&] { d.closed.fetch_add(1); });
      std::lock_guard<std::mutex> l(d.mu);
      d.replies.push_back(std::move(reply));
    });
    s.Handle("/answer", [&](Request& r) {
      std::lock_guard<std::mutex> l(d.mu);
      for (auto& reply : d.replies) reply->Reply(200, "late");
      d.replies.clear();
      r.Reply(200, "answered");
    });
  });
  int fd = Connect(t.port());
  SendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::lock_guard<std::mutex> l(d.mu);
    if (!d.replies.empty()) break;
  }
  close(fd);  // gone before the reply
  EXPECT_EQ(Body(Raw(t.port(), "GET /answer HTTP/1.0\r\n\r\n")), "answered");
  EXPECT_EQ(Body(Raw(t.port(), "GET /answer HTTP/1.0\r\n\r\n")), "answered");
}

TEST(HttpServer, PendingRepliesAreAbandonedWhenTheServerStops) {
  Deferred d;
  auto t = std::make_unique<TestServer>([&](Server& s) {
    s.Handle("/later", [&](Request& r) {
      auto reply = r.Defer();
      reply->SetOnClose([&] { d.closed.fetch_add(1); });
      std::lock_guard<std::mutex> l(d.mu);
      d.replies.push_back(std::move(reply));
    });
  });
  int fds[3];
  for (int& fd : fds) {
    fd = Connect(t->port());
    SendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::lock_guard<std::mutex> l(d.mu);
    if (d.replies.size() == 3) break;
  }
  t->Stop();
  EXPECT_EQ(d.closed.load(), 3);
  for (auto& reply : d.replies) {
    EXPECT_TRUE(reply->client_gone());
    reply->Reply(200, "too late");  // a no-op, after the server stopped
  }
  d.replies.clear();
  for (int fd : fds) {
    EXPECT_EQ(ReadUntil(fd, [](const std::string&) { return false; }), "");
    close(fd);
  }
  t.reset();
}

TEST(HttpServer, DroppedAsyncReplyAnswers500) {
  TestServer t([](Server& s) {
    s.Handle("/drop", [](Request& r) { r.Defer(); });  // the AsyncReply dies at once
  });
  EXPECT_EQ(StatusLine(Raw(t.port(), "GET /drop HTTP/1.0\r\n\r\n")),
            "HTTP/1.0 500 Internal Server Error");
}

// A stream of n chunks, each sent once the previous one drained.
struct Streamer {
  std::unique_ptr<AsyncReply> reply;
  int remaining = 0;
  std::string chunk;
  std::atomic<int>* closed = nullptr;
  std::atomic<int>* finished = nullptr;
  void Next() {
    if (remaining == 0) {
      reply->EndChunked();
      finished->fetch_add(1);
      return;
    }
    --remaining;
    reply->SendChunk(chunk, [this] { Next(); });
  }
};

// Registers /stream?n=N (default 3): each request gets a Streamer, kept in *streams, sending
// N chunks of chunk_size copies of fill and counting into *closed and *finished.
void StreamRoute(Server& s, size_t chunk_size, char fill, std::vector<std::unique_ptr<Streamer>>* streams,
                 std::atomic<int>* closed, std::atomic<int>* finished) {
  s.Handle("/stream", [=](Request& r) {
    auto st = std::make_unique<Streamer>();
    st->remaining = std::stoi(std::string(r.Param("n").value_or("3")));
    st->chunk.assign(chunk_size, fill);
    st->closed = closed;
    st->finished = finished;
    st->reply = r.Defer();
    Streamer* raw = st.get();
    st->reply->SetOnClose([raw] { raw->closed->fetch_add(1); });
    st->reply->StartChunked(200);
    streams->push_back(std::move(st));
    raw->Next();
  });
}

TEST(HttpServer, ChunkedStreamWithFlowControl) {
  std::atomic<int> closed{0}, finished{0};
  std::vector<std::unique_ptr<Streamer>> streams;  // loop thread only
  TestServer t([&](Server& s) {
    StreamRoute(s, 64 * 1024, 'x', &streams, &closed, &finished);
  });
  // A whole stream: 3 chunks of 64 KiB, then the terminating chunk.
  std::string got = Raw(t.port(), "GET /stream?n=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
  EXPECT_NE(got.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_EQ(CountOf(got, "\r\n10000\r\n"), 3u);  // chunk sizes are hex
  EXPECT_EQ(got.substr(got.size() - 5), "0\r\n\r\n");
  // A client that stops reading and leaves mid-stream: the stream notices and stops.
  int fd = Connect(t.port());
  SendAll(fd, "GET /stream?n=100000 HTTP/1.1\r\nHost: x\r\n\r\n");
  ReadUntil(fd, [](const std::string& s) { return s.size() > 256 * 1024; });
  close(fd);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (closed.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(closed.load(), 1);
  EXPECT_EQ(finished.load(), 1);
  t.Stop();
  streams.clear();
}

// ---- client ----

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitLibeventThreads();
    base_ = event_base_new();
  }
  void TearDown() override {
    client_.reset();
    event_base_loop(base_, EVLOOP_NONBLOCK);
    event_base_free(base_);
  }
  HttpClient& client(ClientOptions o = {}) {
    if (!client_) client_ = std::make_unique<HttpClient>(base_, o);
    return *client_;
  }
  event_base* base_ = nullptr;
  std::unique_ptr<HttpClient> client_;
};

void SlowRoute(Server& s) {
  EchoRoutes(s);
  s.Handle("/slow", [](Request& r) {
    struct Slow {
      std::unique_ptr<AsyncReply> reply;
      event* timer;
    };
    auto* slow = new Slow{r.Defer(), nullptr};
    slow->timer = event_new(r.base(), -1, 0, [](int, short, void* arg) {
      auto* self = static_cast<Slow*>(arg);
      self->reply->Reply(200, "slow");
      event_free(self->timer);
      delete self;
    }, slow);
    timeval tv{0, 300 * 1000};
    event_add(slow->timer, &tv);
    // If the server stops first, the timer's event is freed with... nothing: tests that use
    // /slow let every timer fire before stopping.
  });
}

TEST_F(ClientTest, GetPostAndHeaders) {
  TestServer t(EchoRoutes);
  std::vector<HttpResponse> got;
  client().Get(t.address(), "/get?key=" + PercentEncode("u|a+b"), 5000,
               [&](HttpResponse&& r) { got.push_back(std::move(r)); });
  EXPECT_TRUE(got.empty());  // never called back from inside Get
  client().Post(t.address(), "/body", std::string(3000, 'p'), 5000,
                [&](HttpResponse&& r) { got.push_back(std::move(r)); });
  RunUntil(base_, [&] { return got.size() == 2; });
  std::sort(got.begin(), got.end(), [](auto& a, auto& b) { return a.body < b.body; });
  EXPECT_EQ(got[0].status, 200);
  EXPECT_TRUE(got[0].ok());
  EXPECT_EQ(got[0].body, "/get|key=u|a+b");
  EXPECT_EQ(got[0].Header("x-archive-last-day"), "2012-03-25");
  EXPECT_EQ(got[1].body, "3000:pppppppppppppppp");
  EXPECT_EQ(client().in_flight(), 0u);
}

TEST_F(ClientTest, NotFoundIsAResponseNotAnError) {
  TestServer t(EchoRoutes);
  HttpResponse got;
  bool done = false;
  client().Get(t.address(), "/nope", 5000, [&](HttpResponse&& r) { got = std::move(r); done = true; });
  RunUntil(base_, [&] { return done; });
  EXPECT_TRUE(got.ok());
  EXPECT_EQ(got.status, 404);
  EXPECT_EQ(got.body, "not found\n");
}

TEST_F(ClientTest, KeepAliveReusesOneConnection) {
  TestServer t(EchoRoutes);
  for (int i = 0; i < 5; ++i) {
    bool done = false;
    client().Get(t.address(), "/ping", 5000, [&](HttpResponse&& r) {
      EXPECT_EQ(r.body, "OK");
      done = true;
    });
    RunUntil(base_, [&] { return done; });
  }
  EXPECT_EQ(client().connections_opened(), 1u);
  EXPECT_EQ(client().idle_connections(t.address()), 1u);
}

TEST_F(ClientTest, ConcurrentRequestsUseSeveralConnections) {
  TestServer t(SlowRoute);
  int done = 0;
  for (int i = 0; i < 3; ++i) {
    client().Get(t.address(), "/slow", 5000, [&](HttpResponse&& r) {
      EXPECT_EQ(r.body, "slow");
      ++done;
    });
  }
  RunUntil(base_, [&] { return done == 3; });
  EXPECT_EQ(client().connections_opened(), 3u);
  EXPECT_EQ(client().idle_connections(t.address()), 3u);
}

TEST_F(ClientTest, ConnectionRefused) {
  uint16_t port;
  {
    TestServer t(EchoRoutes);
    port = t.port();
  }  // stopped: nothing listens there now
  HttpResponse got;
  bool done = false;
  client().Get(HostPort{"127.0.0.1", port}, "/ping", 5000, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.status, 0);
  EXPECT_EQ(got.error, "127.0.0.1:" + std::to_string(port) + ": connection refused");
}

TEST_F(ClientTest, RequestTimeout) {
  TestServer t(SlowRoute);
  HttpResponse got;
  bool done = false;
  client().Get(t.address(), "/slow", 50, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.status, 0);
  EXPECT_EQ(got.error, t.address().ToString() + ": timeout after 50 ms");
  // The client is still usable, and the slow reply (to a closed connection) harmless.
  done = false;
  client().Get(t.address(), "/ping", 5000, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.body, "OK");
  std::this_thread::sleep_for(400ms);  // let the slow timer fire before the server stops
}

TEST_F(ClientTest, ConnectTimeoutToABlackhole) {
  // A listening socket whose backlog is full never completes new handshakes.
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(lfd, 0), 0);
  socklen_t len = sizeof(addr);
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  uint16_t port = ntohs(addr.sin_port);
  std::vector<int> fillers;
  for (int i = 0; i < 8; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    fillers.push_back(fd);
  }
  ClientOptions o;
  o.connect_timeout_ms = 100;
  HttpResponse got;
  bool done = false;
  client(o).Get(HostPort{"127.0.0.1", port}, "/ping", 5000, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.status, 0);
  EXPECT_EQ(got.error, "127.0.0.1:" + std::to_string(port) + ": connect timeout after 100 ms");
  for (int fd : fillers) close(fd);
  close(lfd);
}

TEST_F(ClientTest, DestroyingTheClientCancelsWithoutCallbacks) {
  TestServer t(SlowRoute);
  bool called = false;
  client().Get(t.address(), "/slow", 5000, [&](HttpResponse&&) { called = true; });
  client().Get(t.address(), "/ping", 5000, [&](HttpResponse&&) { called = true; });
  event_base_loop(base_, EVLOOP_NONBLOCK);
  client_.reset();
  event_base_loop(base_, EVLOOP_NONBLOCK);
  EXPECT_FALSE(called);
  std::this_thread::sleep_for(400ms);
}

TEST_F(ClientTest, ServerClosingAPooledConnectionIsHandled) {
  ServerOptions so;
  so.limits.idle_timeout_ms = 1000;
  TestServer t(EchoRoutes, so);
  bool done = false;
  HttpResponse got;
  client().Get(t.address(), "/ping", 5000, [&](HttpResponse&& r) { got = std::move(r); done = true; });
  RunUntil(base_, [&] { return done; });
  // Let the server close the idle pooled connection, then use the pool again.
  auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    event_base_loop(base_, EVLOOP_NONBLOCK);
    std::this_thread::sleep_for(5ms);
  }
  done = false;
  client().Get(t.address(), "/ping", 5000, [&](HttpResponse&& r) { got = std::move(r); done = true; });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.body, "OK");
}

TEST_F(ClientTest, CallbacksMayStartRequests) {
  TestServer t(EchoRoutes);
  int remaining = 5;
  std::function<void(HttpResponse&&)> again = [&](HttpResponse&& r) {
    EXPECT_EQ(r.body, "OK");
    if (--remaining > 0) client().Get(t.address(), "/ping", 5000, again);
  };
  client().Get(t.address(), "/ping", 5000, again);
  RunUntil(base_, [&] { return remaining == 0 && client().in_flight() == 0; });
  EXPECT_EQ(client().connections_opened(), 1u);
}

TEST_F(ClientTest, ResponseOverTheLimitIsAnError) {
  TestServer t([](Server& s) {
    s.Handle("/big", [](Request& r) { r.Reply(200, std::string(5000, 'b')); });
  });
  ClientOptions o;
  o.max_response_bytes = 4096;
  HttpResponse got;
  bool done = false;
  client(o).Get(t.address(), "/big", 5000, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.status, 0);
  EXPECT_EQ(got.error, t.address().ToString() + ": response body larger than 4096 bytes");
}

TEST_F(ClientTest, BadPathIsAnErrorCalledBackLater) {
  bool done = false;
  HttpResponse got;
  client().Get(HostPort{"127.0.0.1", 9}, "no-slash", 5000, [&](HttpResponse&& r) {
    got = std::move(r);
    done = true;
  });
  EXPECT_FALSE(done);
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(got.error, "127.0.0.1:9: request path 'no-slash' does not start with '/'");
}

// A one-connection server on its own thread that answers each request (read up to the blank
// line) with the next canned bytes, written in pieces of `piece` bytes, and closes the
// connection after the last one: for framings the net/ Server never sends.
class CannedServer {
 public:
  CannedServer(std::vector<std::string> replies, size_t piece)
      : replies_(std::move(replies)), piece_(piece) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 4), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      int fd = accept(listen_fd_, nullptr, nullptr);
      for (const std::string& reply : replies_) {
        ReadUntil(fd, [](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; });
        for (size_t at = 0; at < reply.size(); at += piece_) {
          SendAll(fd, std::string_view(reply).substr(at, piece_));
        }
      }
      close(fd);
    });
  }
  ~CannedServer() {
    thread_.join();
    close(listen_fd_);
  }
  HostPort address() const { return HostPort{"127.0.0.1", port_}; }

 private:
  std::vector<std::string> replies_;
  size_t piece_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST_F(ClientTest, ResponseFramings) {
  std::string big(70000, 'z');  // larger than the client's read buffer
  for (size_t piece : {size_t{1}, size_t{7}, size_t{100000}}) {
    CannedServer s({"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b \r\n\r\nhello",
                    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n"
                    "A\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n",
                    "HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + big,
                    "HTTP/1.0 200 OK\r\n\r\nuntil close"},
                   piece);
    std::vector<HttpResponse> got;
    std::function<void(HttpResponse&&)> next = [&](HttpResponse&& r) {
      got.push_back(std::move(r));
      if (got.size() < 5) client().Get(s.address(), "/x", 5000, next);
    };
    client().Get(s.address(), "/x", 5000, next);
    RunUntil(base_, [&] { return got.size() == 5; });
    ASSERT_EQ(got.size(), 5u) << "piece " << piece;
    EXPECT_EQ(got[0].body, "hello");
    EXPECT_EQ(got[0].Header("x-a"), "b");
    EXPECT_EQ(got[1].status, 404);
    EXPECT_EQ(got[1].body, "");
    EXPECT_EQ(got[2].body, "abc0123456789");
    EXPECT_EQ(got[3].body, big);
    EXPECT_EQ(got[4].error, "");
    EXPECT_EQ(got[4].body, "until close");
    EXPECT_EQ(client().connections_opened(), 1u);  // kept alive up to the HTTP/1.0 answer
    client_.reset();
  }
}

TEST_F(ClientTest, TruncatedAndInvalidResponsesAreErrors) {
  CannedServer truncated({"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"}, 100);
  CannedServer garbage({"SSH-2.0-OpenSSH_9.2\r\n\r\n"}, 100);
  HttpResponse a, b;
  int done = 0;
  client().Get(truncated.address(), "/x", 5000, [&](HttpResponse&& r) { a = std::move(r); ++done; });
  client().Get(garbage.address(), "/x", 5000, [&](HttpResponse&& r) { b = std::move(r); ++done; });
  RunUntil(base_, [&] { return done == 2; });
  EXPECT_EQ(a.error, truncated.address().ToString() + ": connection closed before a complete response");
  EXPECT_EQ(b.error, garbage.address().ToString() + ": invalid HTTP response");
}

TEST_F(ClientTest, AnIdleConnectionTheServerClosesLeavesThePool) {
  ServerOptions so;
  so.limits.idle_timeout_ms = 1000;
  TestServer t(EchoRoutes, so);
  bool done = false;
  client().Get(t.address(), "/ping", 5000, [&](HttpResponse&&) { done = true; });
  RunUntil(base_, [&] { return done; });
  EXPECT_EQ(client().idle_connections(t.address()), 1u);
  // The pooled connection's read interest stays registered: the server's close is seen
  // while idle, not on the next request.
  event* wake = evtimer_new(base_, [](int, short, void*) {}, nullptr);  // bounds the wait
  timeval tv{5, 0};
  evtimer_add(wake, &tv);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (client().idle_connections(t.address()) != 0 && std::chrono::steady_clock::now() < deadline) {
    event_base_loop(base_, EVLOOP_ONCE);
  }
  event_free(wake);
  EXPECT_EQ(client().idle_connections(t.address()), 0u);
}

// ---- blocking fetch ----

TEST(Fetch, WholeBodyAndStream) {
  std::vector<std::unique_ptr<Streamer>> streams;
  std::atomic<int> closed{0}, finished{0};
  TestServer t([&](Server& s) {
    EchoRoutes(s);
    StreamRoute(s, 100 * 1000, 'y', &streams, &closed, &finished);
  });
  HttpResponse r;
  ASSERT_TRUE(Fetch(t.address().ToString(), "/get?key=1", {}, &r).ok());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "/get|key=1");

  size_t streamed = 0;
  size_t calls = 0;
  RequestOptions o;
  o.timeout_ms = 0;
  Status s = FetchStream(t.address(), "/stream?n=50", o, [&](std::string_view chunk) {
    streamed += chunk.size();
    ++calls;
    return true;
  }, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(streamed, 50u * 100 * 1000);
  EXPECT_GT(calls, 1u);
  EXPECT_TRUE(r.body.empty());

  // The receiver aborting (e.g. disk full) ends the transfer with an error.
  s = FetchStream(t.address(), "/stream?n=100000", o, [&](std::string_view) { return false; }, &r);
  EXPECT_EQ(s.message(), t.address().ToString() + ": aborted by receiver");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (closed.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(closed.load(), 1);

  s = Fetch("not an address", "/ping", {}, &r);
  EXPECT_EQ(s.message(), "'not an address' is not host:port");
  t.Stop();
  streams.clear();
}

// ---- waker ----

TEST(LoopWaker, CoalescesAndMissesNothing) {
  InitLibeventThreads();
  event_base* base = event_base_new();
  std::mutex mu;
  std::deque<int> queue;
  long sum = 0;
  int calls = 0;
  {
    LoopWaker waker(base, [&] {
      ++calls;
      std::lock_guard<std::mutex> l(mu);
      while (!queue.empty()) {
        sum += queue.front();
        queue.pop_front();
      }
    });
    std::thread producer([&] {
      for (int i = 1; i <= 10000; ++i) {
        {
          std::lock_guard<std::mutex> l(mu);
          queue.push_back(i);
        }
        waker.Wake();
      }
    });
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sum != 50005000 && std::chrono::steady_clock::now() < deadline) {
      event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    }
    producer.join();
    event_base_loop(base, EVLOOP_NONBLOCK);
  }
  EXPECT_EQ(sum, 50005000);
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 10000);
  event_base_free(base);
}

}  // namespace
}  // namespace clickatron::net
