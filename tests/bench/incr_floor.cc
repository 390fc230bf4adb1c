// incr_floor: how fast can single-event GET /incr with a durable oplog be on this machine
// when the HTTP layer costs the least it can? A measuring instrument (docs/benchmarks.md#api-write-path), not a
// server: it answers only `GET /incr?...` on kept-alive HTTP/1.1 connections.
//
// It does the API's own work per request — the query parsed and validated (net::Query,
// ParseIncrEvent), the event encoded into its realtime records (AppendEventLines), one
// record appended to a real oplog (sync policy as given) and the same 200 JSON answer sent
// after the sync — but with the smallest HTTP layer: read interest registered once per
// connection, every request on it read by one recv(), the answer sent by one send() the
// moment the sync is reported (no epoll_ctl, no FIONREAD ioctl, no write deferred to the
// next loop iteration, no locks in libevent). It delivers nothing to realtime, so it is
// an upper bound for clickatron-api, which also runs the senders.
//
//   incr_floor --port P --oplog-dir DIR [--sync batch|none|always] [--shards 2]
//
// Runs until SIGTERM/SIGINT; binds 127.0.0.1 only.
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "net/query.h"
#include "oplog/oplog.h"

namespace {

using namespace clickatron;

struct Conn {
  int fd = -1;
  event* read_event = nullptr;
  std::string in;
  int waiting = 0;  // answers owed (pending records)
  bool closed = false;
};

struct Pending {
  uint64_t seq;
  Conn* conn;
};

struct Floor {
  event_base* base = nullptr;
  std::unique_ptr<oplog::Oplog> log;
  uint32_t shards = 2;
  int wake_fd = -1;
  std::mutex mu;
  std::vector<oplog::SyncReport> reports;
  std::deque<Pending> pending;
  std::string payload, scratch;
  Event event;
  net::Query query;
  std::string ok_reply, bad_reply;
};

std::string Response(int code, const char* reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

void Release(Conn* c) {
  if (c->closed && c->waiting == 0) delete c;
}

// Stops reading and closes the socket; the Conn itself goes once no answer is owed
// (Release).
void Close(Conn* c) {
  if (c->closed) return;
  event_free(c->read_event);
  close(c->fd);
  c->closed = true;
}

void Send(Conn* c, const std::string& bytes) {
  if (c->closed) return;
  // Answers are a few hundred bytes to a client that reads them; a short write means
  // the client stopped reading, so the connection is dropped.
  if (send(c->fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) != ssize_t(bytes.size())) Close(c);
}

// One complete request head (no body: GET only); false when it is not a GET /incr.
bool HandleRequest(Floor* f, Conn* c, std::string_view head) {
  const size_t sp1 = head.find(' ');
  const size_t sp2 = head.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || head.substr(0, sp1) != "GET") return false;
  std::string_view target = head.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.substr(0, 6) != "/incr?") return false;
  IncrError error;
  if (!f->query.Parse(target.substr(6)).ok() ||
      !ParseIncrEvent(f->query.params(), int64_t(std::time(nullptr)), &f->event, &error)) {
    Send(c, f->bad_reply);
    return true;
  }
  f->payload.clear();
  AppendEventLines(f->event, f->shards, &f->payload, &f->scratch);
  Result<uint64_t> seq = f->log->Append(f->payload);
  if (!seq.ok()) {
    Send(c, f->bad_reply);
    return true;
  }
  if (f->log->policy() == oplog::SyncPolicy::kNone) {
    Send(c, f->ok_reply);
    return true;
  }
  c->waiting++;
  f->pending.push_back(Pending{*seq, c});
  return true;
}

struct ConnCtx {
  Floor* floor;
  Conn* conn;
};

void OnConnRead(int fd, short, void* arg) {
  auto* ctx = static_cast<ConnCtx*>(arg);
  Floor* f = ctx->floor;
  Conn* c = ctx->conn;
  char buf[65536];
  const ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    delete ctx;
    Close(c);
    Release(c);
    return;
  }
  c->in.append(buf, size_t(n));
  size_t start = 0;
  for (;;) {
    const size_t end = c->in.find("\r\n\r\n", start);
    if (end == std::string::npos) break;
    const std::string_view whole(c->in.data() + start, end - start);
    if (!HandleRequest(f, c, whole.substr(0, whole.find("\r\n")))) {
      delete ctx;
      Close(c);
      Release(c);
      return;
    }
    start = end + 4;
    if (c->closed) {  // an answer could not be sent
      delete ctx;
      Release(c);
      return;
    }
  }
  c->in.erase(0, start);
}

void OnAccept(int lfd, short, void* arg) {
  Floor* f = static_cast<Floor*>(arg);
  for (;;) {
    const int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Conn* c = new Conn;
    c->fd = fd;
    auto* ctx = new ConnCtx{f, c};
    c->read_event = event_new(f->base, fd, EV_READ | EV_PERSIST, OnConnRead, ctx);
    event_add(c->read_event, nullptr);
  }
}

void OnWake(int fd, short, void* arg) {
  Floor* f = static_cast<Floor*>(arg);
  uint64_t n;
  if (read(fd, &n, sizeof n) < 0) return;
  std::vector<oplog::SyncReport> reports;
  {
    std::lock_guard<std::mutex> lock(f->mu);
    reports.swap(f->reports);
  }
  for (const oplog::SyncReport& r : reports) {
    const uint64_t settled = std::max(r.durable_seq, r.failed_last);
    while (!f->pending.empty() && f->pending.front().seq <= settled) {
      Pending p = f->pending.front();
      f->pending.pop_front();
      const bool failed = r.failed_last != 0 && p.seq >= r.failed_first && p.seq <= r.failed_last;
      p.conn->waiting--;
      Send(p.conn, failed ? f->bad_reply : f->ok_reply);
      Release(p.conn);
    }
  }
}

void OnSignal(int, short, void* arg) { event_base_loopbreak(static_cast<event_base*>(arg)); }

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  std::string dir, sync = "batch";
  Floor f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port") port = std::atoi(argv[i + 1]);
    else if (flag == "--oplog-dir") dir = argv[i + 1];
    else if (flag == "--sync") sync = argv[i + 1];
    else if (flag == "--shards") f.shards = uint32_t(std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "incr_floor: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (port == 0 || dir.empty()) {
    std::fprintf(stderr, "usage: incr_floor --port P --oplog-dir DIR [--sync batch|none|always] [--shards N]\n");
    return 2;
  }
  Result<oplog::SyncPolicy> policy = oplog::ParseSyncPolicy(sync);
  if (!policy.ok()) {
    std::fprintf(stderr, "incr_floor: %s\n", policy.status().message().c_str());
    return 2;
  }
  f.ok_reply = Response(200, "OK", "{\"status_code\":200,\"status_txt\":\"OK\",\"data\":{\"accepted\":1}}");
  f.bad_reply = Response(400, "Bad Request", "{\"status_code\":400,\"status_txt\":\"INVALID_ARG\",\"data\":null}");
  event_config* cfg = event_config_new();
  event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  f.base = event_base_new_with_config(cfg);
  event_config_free(cfg);
  f.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  oplog::Options options;
  options.sync = *policy;
  options.on_sync = [&f](const oplog::SyncReport& r) {
    {
      std::lock_guard<std::mutex> lock(f.mu);
      f.reports.push_back(r);
    }
    const uint64_t one = 1;
    if (write(f.wake_fd, &one, sizeof one) < 0) std::perror("incr_floor: eventfd");
  };
  Result<std::unique_ptr<oplog::Oplog>> log = oplog::Oplog::Open(dir, options);
  if (!log.ok()) {
    std::fprintf(stderr, "incr_floor: %s\n", log.status().message().c_str());
    return 1;
  }
  f.log = std::move(log).value();

  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, 1024) != 0) {
    std::perror("incr_floor: bind/listen");
    return 1;
  }
  event* accept_ev = event_new(f.base, lfd, EV_READ | EV_PERSIST, OnAccept, &f);
  event* wake_ev = event_new(f.base, f.wake_fd, EV_READ | EV_PERSIST, OnWake, &f);
  event* term_ev = evsignal_new(f.base, SIGTERM, OnSignal, f.base);
  event* int_ev = evsignal_new(f.base, SIGINT, OnSignal, f.base);
  event_add(accept_ev, nullptr);
  event_add(wake_ev, nullptr);
  event_add(term_ev, nullptr);
  event_add(int_ev, nullptr);
  std::fprintf(stderr, "incr_floor: listening on 127.0.0.1:%d, oplog %s (%s)\n", port, dir.c_str(), sync.c_str());
  event_base_dispatch(f.base);
  // Connections are left to the process exit: this is a measuring tool, stopped with it.
  f.log.reset();
  return 0;
}
