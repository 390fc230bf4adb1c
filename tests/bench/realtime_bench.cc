// realtime_bench: the benchmark of the realtime shard (docs/benchmarks.md#realtime), all figures from one run.
//
//   realtime_bench --server build/realtime-release/bin/clickatron-realtime [--keys 1000000]
//                  [--increments 5000000] [--batch 1000] [--pipeline 1] [--dir /tmp]
//                  [--sync-interval 1s] [--rate N] [--phases a,b,...] [--lmemb N] [--leaf-cache N] [--mmap-mb N] [--fsync 0|1]
//
// One workload: `keys` realistic realtime keys (totals `u|{user}.{ymdh}` and subtotals
// `ref.u|{user}.{hash}.{ymdh}` over the 24 hours of one day, 22-46 bytes) and `increments`
// increments drawn from them with a skew (index = keys * u^2: the hottest 10% of keys get
// ~32% of the increments), in a fixed pseudo-random order. Phases, each on a fresh database:
//
//   raw-addint        tcbdbaddint per increment, in-process, full leaf cache: the (a)
//   raw-addint-sorted the same with every batch of `batch` increments sorted by key first
//   raw-default-cache tcbdbaddint with Tokyo Cabinet's default cache (1024 leaves, 512 nodes)
//   raw-real-yield    raw-addint with Debian's sched_yield calls reaching the kernel
//   ring              realtime::Ring::Incr per batch + BeginFlush() every second (the flusher
//                     thread commits meanwhile, as in the server), in-process
//   http              the increments POSTed to clickatron-realtime as /incr batches of
//                     `batch` lines over one keep-alive connection (`pipeline` requests in
//                     flight, default 1: send, wait for the answer, send): the (b)
//   http-real-yield   the same against a server built without no_yield.cc (if given)
//
// This program defines sched_yield itself to count Tokyo Cabinet's calls and to let one
// phase pass them to the kernel (see realtime/no_yield.cc). Progress goes to stderr, the
// summary table to stdout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <tcbdb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "keyformat/ymdh.h"
#include "realtime/batch.h"
#include "realtime/ring.h"

namespace {

uint64_t g_yields = 0;
bool g_real_yield = false;

}  // namespace

extern "C" int sched_yield(void) noexcept {
  ++g_yields;
  return g_real_yield ? static_cast<int>(::syscall(SYS_sched_yield)) : 0;
}

namespace {

using Clock = std::chrono::steady_clock;
namespace rt = clickatron::realtime;

// User + system CPU seconds of this process (who = RUSAGE_SELF) or of a reaped child.
double CpuSeconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double SelfCpu() {
  rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return CpuSeconds(u);
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

struct Options {
  std::string server, server_yield, dir = "/tmp";
  std::string phases = "raw-addint,raw-addint-sorted,raw-default-cache,raw-real-yield,ring,http,http-real-yield";
  rt::SlotOptions slot;  // for the ring phase and the raw phases' tuning
  size_t keys = 1000000, increments = 5000000, batch = 1000;
  size_t pipeline = 1;  // /incr requests in flight on the one connection
  double rate = 0;      // http phases: increments per second to send at (0 = as fast as answered)
  std::string sync_interval = "1s";  // the server's --sync-interval
};

struct Workload {
  std::vector<std::string> keys;
  std::vector<uint32_t> picks;  // key index per increment
  std::vector<int32_t> deltas;
};

Workload MakeWorkload(const Options& o) {
  Workload w;
  std::mt19937_64 rng(20121125);
  const int64_t day = 20412;  // 2025-11-21
  const char* b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<std::string> refs;
  for (int i = 0; i < 64; ++i) {
    std::string h;
    for (int j = 0; j < 11; ++j) h.push_back(b64[rng() % 64]);
    refs.push_back(h + "=");
  }
  // Users with 24 hourly totals and, for 2/3 of hours, one referrer subtotal each: about
  // 40 keys per user.
  std::vector<std::string> users;
  const size_t user_count = o.keys / 40 + 1;
  for (size_t i = 0; i < user_count; ++i) {
    std::string u;
    const size_t len = 4 + rng() % 7;
    for (size_t j = 0; j < len; ++j) u.push_back("abcdefghijklmnopqrstuvwxyz0123456789"[rng() % 36]);
    users.push_back(u);
  }
  for (size_t i = 0; w.keys.size() < o.keys; ++i) {
    const std::string& u = users[i % users.size()];
    const int hour = static_cast<int>((i / users.size()) % 24);
    const std::string ymdh(clickatron::EncodeYmdh(day * 86400 + hour * 3600).value().view());
    if ((i / users.size()) < 24) {
      w.keys.push_back("u|" + u + "." + ymdh);
    } else {
      w.keys.push_back("ref.u|" + u + "." + refs[rng() % refs.size()] + "." + ymdh);
    }
  }
  std::shuffle(w.keys.begin(), w.keys.end(), rng);  // hot keys spread over the key space
  std::uniform_real_distribution<double> uni(0, 1);
  w.picks.reserve(o.increments);
  w.deltas.reserve(o.increments);
  for (size_t i = 0; i < o.increments; ++i) {
    double u = uni(rng);
    w.picks.push_back(static_cast<uint32_t>(static_cast<double>(o.keys) * u * u) % o.keys);
    w.deltas.push_back(rng() % 10 == 0 ? static_cast<int32_t>(rng() % 100) + 1 : 1);
  }
  return w;
}

struct Result {
  std::string phase;
  size_t increments = 0;
  double seconds = 0;
  double cpu = 0;  // CPU seconds (client + server for http phases)
  uint64_t yields = 0;
  std::string note;
  double rate() const { return seconds > 0 ? static_cast<double>(increments) / seconds : 0; }
};

void Progress(const char* phase, size_t done, size_t total, Clock::time_point start) {
  std::fprintf(stderr, "\r%-18s %9zu / %zu  %.0f/s   ", phase, done, total,
               static_cast<double>(done) / std::max(Seconds(start), 1e-9));
}

std::string FreshDir(const Options& o, const char* name) {
  std::string d = o.dir + "/realtime-bench-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

Result RawAddint(const Options& o, const Workload& w, const char* phase, bool sorted, bool default_cache,
                 bool real_yield, size_t limit) {
  const std::string dir = FreshDir(o, phase);
  TCBDB* db = tcbdbnew();
  tcbdbsetmutex(db);
  const rt::SlotOptions& so = o.slot;
  if (so.mmap_bytes > 0) tcbdbsetxmsiz(db, so.mmap_bytes);
  tcbdbtune(db, so.lmemb, so.nmemb, 262139, -1, -1, BDBTLARGE);
  if (!default_cache) tcbdbsetcache(db, so.leaf_cache, so.node_cache);
  if (!tcbdbopen(db, (dir + "/raw.tcb").c_str(), BDBOWRITER | BDBOCREAT | BDBOTRUNC)) {
    std::fprintf(stderr, "tcbdbopen: %s\n", tcbdberrmsg(tcbdbecode(db)));
    std::exit(1);
  }
  const size_t n = std::min(limit, w.picks.size());
  std::vector<uint32_t> order(o.batch);
  g_yields = 0;
  g_real_yield = real_yield;
  const double cpu0 = SelfCpu();
  auto start = Clock::now();
  for (size_t b = 0; b < n; b += o.batch) {
    const size_t m = std::min(o.batch, n - b);
    order.assign(w.picks.begin() + static_cast<long>(b), w.picks.begin() + static_cast<long>(b + m));
    if (sorted) {
      std::sort(order.begin(), order.end(), [&w](uint32_t x, uint32_t y) { return w.keys[x] < w.keys[y]; });
    }
    for (size_t i = 0; i < m; ++i) {
      const std::string& k = w.keys[order[i]];
      if (tcbdbaddint(db, k.data(), static_cast<int>(k.size()), w.deltas[b + i]) == INT_MIN) {
        std::fprintf(stderr, "tcbdbaddint: %s\n", tcbdberrmsg(tcbdbecode(db)));
        std::exit(1);
      }
    }
    if ((b / o.batch) % 200 == 0) Progress(phase, b + m, n, start);
  }
  Result r{phase, n, Seconds(start), SelfCpu() - cpu0, g_yields, ""};
  g_real_yield = false;
  r.note = "records " + std::to_string(tcbdbrnum(db));
  tcbdbdel(db);
  std::filesystem::remove_all(dir);
  return r;
}

// Batch bodies in /incr format, built before any timing.
std::vector<std::string> MakeBodies(const Options& o, const Workload& w) {
  std::vector<std::string> bodies;
  for (size_t b = 0; b < w.picks.size(); b += o.batch) {
    std::string body;
    const size_t m = std::min(o.batch, w.picks.size() - b);
    for (size_t i = 0; i < m; ++i) {
      body += w.keys[w.picks[b + i]];
      body += ',';
      body += std::to_string(w.deltas[b + i]);
      body += '\n';
    }
    bodies.push_back(std::move(body));
  }
  return bodies;
}

Result RingPhase(const Options& o, const std::vector<std::string>& bodies, size_t increments) {
  const std::string dir = FreshDir(o, "ring");
  auto ring = rt::Ring::Open(dir, o.slot);
  if (!ring.ok()) {
    std::fprintf(stderr, "ring: %s\n", ring.status().message().c_str());
    std::exit(1);
  }
  std::vector<rt::IncrLine> lines;
  g_yields = 0;
  const double cpu0 = SelfCpu();
  auto start = Clock::now();
  auto last_sync = start;
  int64_t seq = 0;
  for (const std::string& body : bodies) {
    clickatron::Status s = rt::ParseIncrBatch(body, &lines);
    rt::WriteOutcome out = (*ring)->Incr(&lines, "bench", ++seq);
    if (!s.ok() || !out.ok()) {
      std::fprintf(stderr, "ring: %s%s\n", s.message().c_str(), out.message.c_str());
      std::exit(1);
    }
    (*ring)->Poll();
    if (Seconds(last_sync) >= 1.0) {
      (*ring)->BeginFlush();  // false while the previous flush runs: retried next batch
      if ((*ring)->flushing()) last_sync = Clock::now();
    }
    if (seq % 200 == 0) Progress("ring", static_cast<size_t>(seq) * o.batch, increments, start);
  }
  (void)(*ring)->Sync();
  Result r{"ring", increments, Seconds(start), SelfCpu() - cpu0, g_yields, ""};
  const auto& st = (*ring)->stats();
  r.note = "flushes " + std::to_string(st.syncs) + ", avg " + std::to_string(st.syncs ? st.sync_micros_total / st.syncs / 1000 : 0) +
           " ms, max " + std::to_string(st.sync_micros_max / 1000) + " ms, durable lag max " +
           std::to_string(st.durable_lag_micros_max / 1000) + " ms";
  (void)(*ring)->Close();
  ring.value().reset();
  std::filesystem::remove_all(dir);
  return r;
}

// --- a minimal blocking HTTP/1.1 client over one keep-alive connection ---

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads one response; returns the status code (-1 on a broken connection), body in *body.
// *buf holds bytes already received past the previous response (pipelining).
int ReadResponse(int fd, std::string* buf, std::string* body, std::string* headers = nullptr) {
  size_t header_end;
  char chunk[16384];
  while ((header_end = buf->find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return -1;
    buf->append(chunk, static_cast<size_t>(n));
  }
  const int code = std::atoi(buf->c_str() + 9);
  size_t length = 0;
  size_t cl = buf->find("Content-Length: ");
  if (cl != std::string::npos && cl < header_end) length = std::strtoul(buf->c_str() + cl + 16, nullptr, 10);
  while (buf->size() < header_end + 4 + length) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return -1;
    buf->append(chunk, static_cast<size_t>(n));
  }
  body->assign(*buf, header_end + 4, length);
  if (headers != nullptr) headers->assign(*buf, 0, header_end + 2);
  buf->erase(0, header_end + 4 + length);
  return code;
}

int Exchange(int fd, const std::string& head, std::string_view payload, std::string* buf, std::string* body) {
  if (!SendAll(fd, head) || !SendAll(fd, payload)) return -1;
  return ReadResponse(fd, buf, body);
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

Result HttpPhase(const Options& o, const std::string& server, const char* phase,
                 const std::vector<std::string>& all_bodies, size_t limit) {
  const size_t batches = std::min(all_bodies.size(), (limit + o.batch - 1) / o.batch);
  const std::vector<std::string> bodies(all_bodies.begin(), all_bodies.begin() + static_cast<long>(batches));
  size_t increments = 0;
  for (const std::string& b : bodies) increments += static_cast<size_t>(std::count(b.begin(), b.end(), '\n'));
  const std::string dir = FreshDir(o, phase);
  const int port = FreePort();
  const std::string port_text = std::to_string(port);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(server.c_str(), server.c_str(), "--data-dir", dir.c_str(), "--port", port_text.c_str(),
            "--sync-interval", o.sync_interval.c_str(), static_cast<char*>(nullptr));
    std::perror("exec");
    ::_exit(127);
  }
  int fd = -1;
  for (int i = 0; i < 500 && fd < 0; ++i) {
    fd = Connect(port);
    if (fd < 0) ::usleep(10000);  // the server is starting; bounded at 5 s
  }
  if (fd < 0) {
    std::fprintf(stderr, "%s: server did not start\n", phase);
    std::exit(1);
  }
  std::string head, buf, body;
  const double cpu0 = SelfCpu();
  auto start = Clock::now();
  // Up to `pipeline` requests in flight on the one connection; answers come in order.
  size_t sent = 0, answered = 0;
  auto check = [&](int code) {
    if (code != 200 || body.find("\"applied\":") == std::string::npos) {
      std::fprintf(stderr, "%s: batch %zu: HTTP %d %s\n", phase, answered + 1, code, body.c_str());
      std::exit(1);
    }
    ++answered;
    if (answered % 200 == 0) Progress(phase, answered * o.batch, increments, start);
  };
  while (answered < bodies.size()) {
    while (sent < bodies.size() && sent - answered < o.pipeline) {
      if (o.rate > 0) {  // paced: batch `sent` leaves at start + sent * batch / rate
        const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(static_cast<double>(sent * o.batch) / o.rate));
        if (Clock::now() < due) std::this_thread::sleep_until(due);
      }
      const std::string& payload = bodies[sent];
      head = "POST /incr?source=bench&seq=" + std::to_string(++sent) +
             " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Clickatron-Sender: be4c000000000001\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n\r\n";
      if (!SendAll(fd, head) || !SendAll(fd, payload)) check(-1);
    }
    check(ReadResponse(fd, &buf, &body));
  }
  Result r{phase, increments, Seconds(start), SelfCpu() - cpu0, 0, ""};
  if (o.pipeline > 1 || o.sync_interval != "1s") {
    r.phase += " (pipeline " + std::to_string(o.pipeline) + ", sync " + o.sync_interval + ")";
  }
  if (o.rate > 0) r.phase += " (paced at " + std::to_string(static_cast<int64_t>(o.rate)) + "/s)";
  // Until the last batch is durable: every /incr answer names the source's synced seq
  // (X-Realtime-Synced-Seq), so re-send the first line of the last batch with its seq — a
  // duplicate, applied nowhere — until it names that batch. (Not /stats: its exact record count costs one lookup per
  // pending key, which would slow the shard being measured.)
  double durable_seconds = -1;
  {
    const std::string last = bodies.back().substr(0, bodies.back().find('\n') + 1);
    const std::string again = "POST /incr?source=bench&seq=" + std::to_string(bodies.size()) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Clickatron-Sender: be4c000000000001\r\nContent-Length: " + std::to_string(last.size()) +
                              "\r\n\r\n";
    const std::string want = "X-Realtime-Synced-Seq: " + std::to_string(bodies.size()) + "\r\n";
    std::string headers;
    for (auto deadline = Clock::now() + std::chrono::seconds(30); Clock::now() < deadline;) {
      if (!SendAll(fd, again) || !SendAll(fd, last) || ReadResponse(fd, &buf, &body, &headers) != 200) break;
      if (headers.find(want) != std::string::npos) {
        durable_seconds = Seconds(start);
        break;
      }
      ::usleep(5000);  // a benchmark's poll interval, not test synchronisation
    }
  }
  head = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  if (Exchange(fd, head, "", &buf, &body) == 200) {
    auto field = [&body](const char* name) {
      size_t p = body.find(std::string("\"") + name + "\":");
      return p == std::string::npos ? std::string("?")
                                    : body.substr(p + std::strlen(name) + 3,
                                                  body.find_first_of(",}", p) - p - std::strlen(name) - 3);
    };
    r.note = "applied " + field("incr_applied") + ", duplicate " + field("incr_duplicate") + ", flushes " + field("syncs") + ", flush avg " +
             field("sync_micros_avg") + " us, max " + field("sync_micros_max") + " us, durable lag max " +
             field("durable_lag_micros_max") + " us, loop waits " + field("loop_waits") +
             "; all durable at " + std::to_string(durable_seconds).substr(0, 5) + " s (" +
             std::to_string(static_cast<int64_t>(static_cast<double>(increments) / durable_seconds)) + "/s)";
  }
  ::close(fd);
  ::kill(pid, SIGTERM);
  int status = 0;
  rusage server_usage{};
  ::wait4(pid, &status, 0, &server_usage);
  r.cpu += CpuSeconds(server_usage);  // the server's whole life: startup and shutdown included
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r.note += " (server exit " + std::to_string(status) + ")";
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view f = argv[i];
    if (f == "--server") o.server = argv[i + 1];
    else if (f == "--server-yield") o.server_yield = argv[i + 1];
    else if (f == "--keys") o.keys = std::strtoul(argv[i + 1], nullptr, 10);
    else if (f == "--increments") o.increments = std::strtoul(argv[i + 1], nullptr, 10);
    else if (f == "--batch") o.batch = std::strtoul(argv[i + 1], nullptr, 10);
    else if (f == "--dir") o.dir = argv[i + 1];
    else if (f == "--phases") o.phases = argv[i + 1];
    else if (f == "--sync-interval") o.sync_interval = argv[i + 1];
    else if (f == "--rate") o.rate = std::strtod(argv[i + 1], nullptr);
    else if (f == "--pipeline") o.pipeline = std::max<size_t>(1, std::strtoul(argv[i + 1], nullptr, 10));
    else if (f == "--lmemb") o.slot.lmemb = std::atoi(argv[i + 1]);
    else if (f == "--leaf-cache") o.slot.leaf_cache = std::atoi(argv[i + 1]);
    else if (f == "--mmap-mb") o.slot.mmap_bytes = std::atoll(argv[i + 1]) << 20;
    else if (f == "--fsync") o.slot.fsync = std::atoi(argv[i + 1]) != 0;
    else if (f == "--background-fsync") o.slot.background_fsync = std::atoi(argv[i + 1]) != 0;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  std::fprintf(stderr, "workload: %zu keys, %zu increments, batches of %zu\n", o.keys, o.increments, o.batch);
  Workload w = MakeWorkload(o);
  std::vector<std::string> bodies = MakeBodies(o, w);
  std::vector<Result> results;
  const size_t small = std::min<size_t>(o.increments, 1000000);
  auto want = [&o](std::string_view phase) {
    return ("," + o.phases + ",").find("," + std::string(phase) + ",") != std::string::npos;
  };
  // Each row is printed as soon as its phase ends; ratios are against the first phase run.
  std::printf("| phase | increments | wall s | increments/s | vs first | CPU s | increments/CPU-s | vs first | sched_yield per increment | notes |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  auto report = [&results](Result r) {
    results.push_back(std::move(r));
    const Result& first = results.front();
    const Result& last = results.back();
    const double per_cpu = static_cast<double>(last.increments) / last.cpu;
    const double first_cpu = static_cast<double>(first.increments) / first.cpu;
    std::string yields = last.phase.starts_with("http") ? "-" :
        std::to_string(static_cast<double>(last.yields) / static_cast<double>(last.increments)).substr(0, 4);
    std::fprintf(stderr, "\n");
    std::printf("| %s | %zu | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f | %s | %s |\n", last.phase.c_str(), last.increments,
                last.seconds, last.rate(), last.rate() / first.rate(), last.cpu, per_cpu, per_cpu / first_cpu,
                yields.c_str(), last.note.c_str());
    std::fflush(stdout);
  };
  if (want("raw-addint")) report(RawAddint(o, w, "raw-addint", false, false, false, o.increments));
  if (want("http") && !o.server.empty()) report(HttpPhase(o, o.server, "http", bodies, o.increments));
  if (want("raw-addint-sorted")) report(RawAddint(o, w, "raw-addint-sorted", true, false, false, o.increments));
  if (want("ring")) report(RingPhase(o, bodies, o.increments));
  if (want("raw-default-cache")) report(RawAddint(o, w, "raw-default-cache", false, true, false, small));
  if (want("raw-real-yield")) report(RawAddint(o, w, "raw-real-yield", false, false, true, small));
  if (want("http-real-yield") && !o.server_yield.empty()) {
    report(HttpPhase(o, o.server_yield, "http-real-yield", bodies, small));
  }
  return 0;
}
