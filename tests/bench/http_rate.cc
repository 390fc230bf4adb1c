// http_rate: an open-loop HTTP/1.1 load generator — requests at a fixed rate over a fixed
// number of keep-alive connections, latency counted from when each request was due.
//
//   http_rate --target 127.0.0.1:PORT --paths FILE --rate R [--connections C] [--seconds S]
//             [--warmup S]
//
// wrk is closed-loop: each connection sends its next request when the last answer arrives,
// so at full load its latencies are queueing set by the connection count (Little's law),
// and a stall delays the requests that would have measured it. Here request i is due at
// start + i/R whatever happens; it goes out on the first idle connection (one request in
// flight per connection, as wrk and browsers do), and its latency runs from its due time,
// so time spent waiting for a connection counts (no coordinated omission). Paths are read
// from FILE, one per line, and picked at random. Loopback targets only; bounded by
// --seconds plus 5 s for the last answers. Prints one summary line.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <strings.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "http_rate: %s\n", why.c_str());
  std::exit(2);
}

struct Connection {
  int fd = -1;
  bool busy = false;
  int64_t due_ns = 0;       // when the request in flight was due
  bool measured = false;    // sent after the warm-up
  std::string in;           // response bytes so far
};

// The length of the whole response at the start of `in` once its head is there, else 0;
// sets *status, and *close when the server says it will close the connection. Our servers
// always send Content-Length.
size_t ResponseLength(const std::string& in, int* status, bool* close) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  if (in.size() < 12) return 0;
  *status = std::atoi(in.c_str() + 9);
  size_t length = 0;
  size_t at = 0;
  while ((at = in.find('\n', at)) != std::string::npos && at < head_end) {
    ++at;
    if (strncasecmp(in.c_str() + at, "content-length:", 15) == 0) {
      length = std::strtoull(in.c_str() + at + 15, nullptr, 10);
    } else if (strncasecmp(in.c_str() + at, "connection: close", 17) == 0) {
      *close = true;
    }
  }
  return head_end + 4 + length;
}

int Connect(const sockaddr_in& addr) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(std::string("socket: ") + std::strerror(errno));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    Die(std::string("connect: ") + std::strerror(errno));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

double Quantile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[i]) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, paths_file;
  double rate = 0, seconds = 10, warmup = 1;
  int connections = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--target") target = argv[i + 1];
    else if (flag == "--paths") paths_file = argv[i + 1];
    else if (flag == "--rate") rate = std::atof(argv[i + 1]);
    else if (flag == "--connections") connections = std::atoi(argv[i + 1]);
    else if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (flag == "--warmup") warmup = std::atof(argv[i + 1]);
    else Die("unknown flag " + flag);
  }
  if (target.empty() || paths_file.empty() || rate <= 0 || connections < 1 || seconds <= 0) {
    Die("usage: http_rate --target 127.0.0.1:PORT --paths FILE --rate R [--connections C] "
        "[--seconds S] [--warmup S]");
  }
  const size_t colon = target.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(target.c_str() + colon + 1)));
  if (colon == std::string::npos || inet_pton(AF_INET, target.substr(0, colon).c_str(), &addr.sin_addr) != 1 ||
      (ntohl(addr.sin_addr.s_addr) >> 24) != 127) {
    Die("--target must be a loopback address 127.x.x.x:PORT, not " + target);
  }
  std::vector<std::string> requests;
  {
    std::ifstream in(paths_file);
    std::string path;
    while (std::getline(in, path)) {
      if (!path.empty()) requests.push_back("GET " + path + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
    }
  }
  if (requests.empty()) Die("no paths in " + paths_file);

  const int ep = epoll_create1(EPOLL_CLOEXEC);
  const int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_event tev{};
  tev.events = EPOLLIN;
  tev.data.u64 = UINT64_MAX;
  epoll_ctl(ep, EPOLL_CTL_ADD, timer, &tev);
  std::vector<Connection> conns(static_cast<size_t>(connections));
  for (size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = Connect(addr);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
  }

  std::mt19937_64 rng(42);
  const int64_t interval_ns = static_cast<int64_t>(1e9 / rate);
  const int64_t start = NowNs() + 1000000;
  const int64_t measure_from = start + static_cast<int64_t>(warmup * 1e9);
  const int64_t schedule_end = measure_from + static_cast<int64_t>(seconds * 1e9);
  const int64_t hard_end = schedule_end + 5000000000LL;
  int64_t next_due = start;
  std::deque<int64_t> waiting;  // due times of requests no connection has taken yet
  std::vector<int64_t> latencies;
  latencies.reserve(static_cast<size_t>(rate * seconds) + 16);
  uint64_t non2xx = 0, errors = 0, late_at_end = 0;
  char buf[65536];

  auto send_on = [&](Connection& c, int64_t due) {
    const std::string& req = requests[rng() % requests.size()];
    const ssize_t n = send(c.fd, req.data(), req.size(), MSG_NOSIGNAL);
    if (n != static_cast<ssize_t>(req.size())) Die("send: short or failed");
    c.busy = true;
    c.due_ns = due;
    c.measured = due >= measure_from;
  };
  auto dispatch = [&] {
    for (Connection& c : conns) {
      if (waiting.empty()) return;
      if (!c.busy) {
        send_on(c, waiting.front());
        waiting.pop_front();
      }
    }
  };

  for (;;) {
    const int64_t now = NowNs();
    while (next_due <= now && next_due < schedule_end) {
      waiting.push_back(next_due);
      next_due += interval_ns;
    }
    dispatch();
    bool in_flight = !waiting.empty();
    for (const Connection& c : conns) in_flight = in_flight || c.busy;
    if (now >= hard_end || (next_due >= schedule_end && !in_flight)) break;
    if (next_due < schedule_end) {
      itimerspec when{};
      when.it_value.tv_sec = next_due / 1000000000;
      when.it_value.tv_nsec = next_due % 1000000000;
      timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, nullptr);
    }
    epoll_event events[64];
    const int n = epoll_wait(ep, events, 64, 100);
    for (int e = 0; e < n; ++e) {
      if (events[e].data.u64 == UINT64_MAX) {
        uint64_t ticks;
        (void)!read(timer, &ticks, sizeof ticks);
        continue;
      }
      const size_t index = events[e].data.u64;
      Connection& c = conns[index];
      bool closed = false;
      for (;;) {
        const ssize_t got = recv(c.fd, buf, sizeof buf, 0);
        if (got > 0) {
          c.in.append(buf, static_cast<size_t>(got));
          continue;
        }
        closed = got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        break;
      }
      int status = 0;
      bool will_close = false;
      const size_t length = ResponseLength(c.in, &status, &will_close);
      if (length != 0 && c.in.size() >= length) {
        closed = closed || will_close;
        if (c.in.size() > length) Die("more bytes than one response");
        c.in.clear();
        c.busy = false;
        const int64_t done = NowNs();
        if (status < 200 || status > 299) ++non2xx;
        if (c.measured) latencies.push_back(done - c.due_ns);
      }
      if (closed) {
        // A server may close a kept-alive connection between requests (nginx does after
        // keepalive_requests): reconnect, as wrk does. A request lost with it is an error.
        if (c.busy) ++errors;
        close(c.fd);
        c = Connection{};
        c.fd = Connect(addr);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = index;
        epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
      }
    }
  }
  for (const Connection& c : conns) {
    if (c.busy) ++late_at_end;
    close(c.fd);
  }
  late_at_end += waiting.size();
  std::sort(latencies.begin(), latencies.end());
  std::printf("http_rate: %.0f req/s offered over %d connections for %.0f s (+%.0f s warm-up): "
              "%zu answered (%.0f/s), non-2xx %llu, lost %llu, unanswered %llu; latency from due time: "
              "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms\n",
              rate, connections, seconds, warmup, latencies.size(),
              static_cast<double>(latencies.size()) / seconds, static_cast<unsigned long long>(non2xx),
              static_cast<unsigned long long>(errors), static_cast<unsigned long long>(late_at_end), Quantile(latencies, 0.5), Quantile(latencies, 0.9),
              Quantile(latencies, 0.99), Quantile(latencies, 0.999),
              latencies.empty() ? 0.0 : static_cast<double>(latencies.back()) / 1e6);
  return errors == 0 && late_at_end == 0 ? 0 : 1;
}
