// ArchiveServer: clickatron-archive, the sortdb-compatible HTTP face of a LiveDb (docs/api.md#clickatron-archive).
//
// Endpoints (each also answers with a trailing slash, as sortdb's did):
//   /get?key=K            200 the value and its '\n'; 404 empty body when absent
//   /mget?key=A&key=B...  200 the found `key,value\n` lines in request order (every
//                         parameter whose name starts with 'k' is a key; absent keys are
//                         skipped; none found is a 200 with an empty body); more than
//                         --max-mget-keys keys: 400 TOO_MANY_KEYS, nothing looked up;
//                         an answer over --max-answer-mb: 400 ANSWER_TOO_LARGE
//   /fwmatch?key=P[&limit=N][&after=K]  200 every line whose key starts with P (and is
//                         greater than K), in file order, at most N lines (default and
//                         maximum: --fwmatch-limit); a cut answer carries X-Fwmatch-More: 1;
//                         N above --fwmatch-limit: 400 INVALID_ARG_LIMIT with
//                         X-Fwmatch-Limit: <the cap>, nothing listed; an answer over
//                         --max-answer-mb: 400 ANSWER_TOO_LARGE (ask with a smaller limit)
//   /reload (GET or POST) 200 "db reloaded\n" once the file now at the path is verified and
//                         live; 500 naming the problem when it is refused (old file stays)
//   /stats                JSON envelope: per-endpoint requests and latency, hits, misses,
//                         the file, its manifest's generation and last day, uptime, and
//                         "limits" (net::Server::WriteLimitFields, max_mget_keys,
//                         fwmatch_limit)
//   /metrics              the same values in the Prometheus text format (net/stats_writer.h),
//                         guarded as /stats
//   /ping                 200 "OK\n"
// A file truncated or rewritten in place under the server never kills it
// (docs/archive.md#a-file-changed-under-the-server): every read is a guarded read of the
// mapping (mapped_read.h) copied into the loop's scratch before it is answered, and a
// FileWatcher reports writes. Once the served file is seen damaged, /get, /mget and /fwmatch answer
// 503 ARCHIVE_FILE_DAMAGED (the envelope, its message naming the file and what changed)
// and never a byte of it; /stats says since when and how it was seen; one log line per
// episode; a reload that verifies a whole file at the path ends it, a refused one says
// the served file stays damaged.
// The cluster secret (docs/operations.md#threat-model): /reload first checks the
// X-Clickatron-Secret header (401 SECRET_MISSING, 403 SECRET_WRONG, nothing reloaded); the
// reads and /stats stay open as sortdb's were unless --require-secret-for-reads.
// Bad requests (no key, an empty key, a key over 4096 bytes, bad percent-encoding, a bad
// limit) get 400 with the envelope {"status_code":400,"status_txt":"MISSING_ARG_KEY",
// "data":null,"message":"..."}. Keys are decoded as described in key_params.h.
// When the serving file has a manifest, every /get, /mget and /fwmatch answer carries
// `X-Archive-Last-Day: YYYY-MM-DD` and `X-Archive-Generation: <id>` of the file that
// answered it, `X-Archive-Rollups: 1` when that manifest says `rollups = 1`
// (docs/formats.md#rollup-records), and `ETag: "<generation>"`: a valid request whose
// If-None-Match names that tag is answered 304 with those headers and no body (wire/generation.h).
//
// Threads: options.threads event loops share one listening address (SO_REUSEPORT) and one
// mapping. A request holds the file it started on until it has replied, so a reload never
// pulls a mapping from under it. Reloads (SIGHUP, /reload) run on a thread of their own
// (reloader.h): the loops keep serving the old file while the new one is verified, and a
// /reload answers once the switch is done. SIGTERM stops the loops.
//
// Hot path: a lookup copies the answer's bytes from the mapping into the loop's scratch
// (inside the guard) and from there into evhttp's output buffer; per-loop scratch buffers
// are reused, so it allocates nothing of its own.
#ifndef CLICKATRON_ARCHIVE_ARCHIVE_SERVER_H_
#define CLICKATRON_ARCHIVE_ARCHIVE_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "archive/date_header.h"
#include "archive/db_file.h"
#include "archive/file_health.h"
#include "archive/file_watcher.h"
#include "archive/key_params.h"
#include "archive/live_db.h"
#include "archive/reloader.h"
#include "base/status.h"
#include "net/http_server.h"
#include "net/json.h"
#include "net/stats_writer.h"
#include "net/loop_waker.h"
#include "net/request.h"

namespace clickatron::archive {

struct ArchiveOptions {
  std::string db_file;
  char separator = ',';
  std::string address = "127.0.0.1";
  uint16_t port = 8080;
  int threads = 1;
  size_t fwmatch_limit = 10000;
  size_t max_mget_keys = 1000;  // keys one /mget may ask for
  size_t max_answer_bytes = 64u << 20;  // one /mget or /fwmatch answer
  // Per-client cost limits (docs/operations.md#limits). A request here is a URL of at
  // most 64 KiB, so 16 MiB in flight is over 200 of the largest at once.
  net::ServerLimits limits{.max_inflight_body_bytes = 16u << 20};
  bool populate = false;
  bool log_requests = false;
  // The FileWatcher's fstat cadence (no flag: clickatron-archive always watches); 0: no
  // watcher, so damage is seen only by the reads that fault or find broken bytes (the
  // in-process tests of those reads, archive_server_test.cc).
  int file_check_ms = 250;
  // The cluster secret (net/secret.h): /reload needs it; /get, /mget, /fwmatch and /stats
  // too with require_secret_for_reads. Empty: no check, allowed only on a loopback address
  // (Start fails with SECRET_REQUIRED otherwise).
  std::string secret;
  bool require_secret_for_reads = false;
};

class ArchiveServer {
 public:
  explicit ArchiveServer(ArchiveOptions options);
  ~ArchiveServer();
  ArchiveServer(const ArchiveServer&) = delete;
  ArchiveServer& operator=(const ArchiveServer&) = delete;

  // Opens and verifies the file, then binds. Errors name the file's first bad line or the
  // address that could not be bound.
  Status Start();
  // Serves until SIGTERM/SIGINT or Stop(). REQUIRES: Start() succeeded.
  void Run();
  void Stop();
  uint16_t port() const { return server_.port(); }

 private:
  // Counters of one loop, written only by it (a relaxed load+store, no locked op) and
  // summed by /stats. Padded so two loops never share a cache line.
  struct alignas(64) LoopCounters {
    std::atomic<uint64_t> get_hits{0}, get_misses{0};
    std::atomic<uint64_t> mget_keys{0}, mget_hits{0};
    std::atomic<uint64_t> fwmatch_lines{0};
    std::atomic<uint64_t> bad_requests{0};
    std::atomic<uint64_t> too_many_keys{0}, answers_too_large{0};
    std::atomic<uint64_t> not_modified{0};  // 304s: answers the client already held
    std::atomic<uint64_t> damaged_reads{0};  // 503 ARCHIVE_FILE_DAMAGED
  };
  // Scratch space of one loop, reused by every request it serves.
  struct LoopScratch {
    KeyParams params;
    // The answer, copied out of the mapping: the first out_size bytes of out, which only
    // grows (resizing it to each answer cost ~50 instructions a /get:
    // docs/benchmarks.md#archive-guarded-reads).
    std::string out;
    size_t out_size = 0;
    // Room for an answer of n bytes. May allocate: call it before reading mapped bytes into it.
    char* Room(size_t n) {
      if (out.size() < n) out.resize(n);
      out_size = n;
      return out.data();
    }
    std::string_view answer() const { return std::string_view(out.data(), out_size); }
    std::vector<std::string_view> lines;  // the lines an /mget or /fwmatch found
    DateHeader date;
  };
  // /reload answers waiting for the reloader, handed back to their loop through a waker.
  struct ReloadMailbox {
    std::unique_ptr<net::LoopWaker> waker;  // created on the loop's thread at first use
    std::mutex mu;
    std::vector<std::pair<std::shared_ptr<net::AsyncReply>, Status>> ready;  // guarded by mu
  };

  void OnGet(net::Request& req);
  void OnMget(net::Request& req);
  void OnFwmatch(net::Request& req);
  // The /fwmatch limit: the request's `limit`, else --fwmatch-limit. False (and the 400
  // sent) when it is not a positive integer or is above --fwmatch-limit.
  bool FwmatchLimit(net::Request& req, const KeyParams& params, size_t* limit);
  void OnReload(net::Request& req);
  // The loops' counters, summed.
  struct CounterSums {
    uint64_t get_hits = 0, get_misses = 0, mget_keys = 0, mget_hits = 0, fwmatch_lines = 0, bad_requests = 0,
             too_many_keys = 0, answers_too_large = 0, not_modified = 0, damaged_reads = 0;
  };
  CounterSums SumCounters() const;
  // /stats and /metrics (net/stats_writer.h).
  void WriteStats(net::StatsWriter& w) const;
  void OnPing(net::Request& req);
  // /stats: file_damaged, damage (null, or since, seconds, seen_by, message),
  // damaged_reads, damage_episodes.
  void WriteDamageFields(net::StatsWriter* w, const DbFile& db, uint64_t damaged_reads) const;
  void OnReloaded(const Status& s);
  // The text of a refused reload: the old file keeps being served, or stays damaged.
  std::string ReloadRefusal(const Status& s) const;
  // Marks db damaged (once: that call logs the episode) with what DescribeDamage says.
  void FileDamaged(const DbFile& db, DamageSource source, size_t offset);
  // After a guarded read: false (and the 503 sent) when it faulted or the file is damaged
  // by now; true when what it copied is the verified file's.
  bool ReadWasWhole(net::Request& req, const DbFile& db, const MappedFault& fault);
  void ReplyDamaged(net::Request& req, const DbFile& db);
  // Copies the lines into scratch.out (the answer's bytes), or sets *too_large. Inside a
  // guarded read.
  bool CopyLines(LoopScratch& scratch) const;
  // A rare huge answer should not pin its memory in the loop's scratch for ever.
  static void TrimScratch(LoopScratch& scratch);
  void DeliverReloads(int loop);
  void ReplyBadRequest(net::Request& req, const char* status_txt, const std::string& message);
  void ReplyAnswerTooLarge(net::Request& req, const char* what);
  static void AddFileHeaders(net::Request& req, const DbFile& db);
  // A request whose If-None-Match names the served generation's tag (wire/generation.h) is
  // answered 304 without a body: true when it was.
  bool ReplyNotModified(net::Request& req, LoopScratch& scratch, const DbFile& db);
  // Replies with body, giving evhttp the Date and Content-Length headers ready-made (it
  // would printf them for every reply; see date_header.h).
  static void ReplyText(net::Request& req, LoopScratch& scratch, int code,
                        std::string_view body);

  ArchiveOptions options_;
  LiveDb db_;
  net::Server server_;
  std::unique_ptr<LoopCounters[]> counters_;
  std::unique_ptr<LoopScratch[]> scratch_;
  std::chrono::steady_clock::time_point started_;
  // Declared after server_ so they go first: pending replies and wakers must not outlive
  // the loops' event bases.
  std::unique_ptr<ReloadMailbox[]> mailboxes_;
  std::atomic<uint64_t> damage_episodes_{0};  // files found damaged
  FileWatcher watcher_;
  Reloader reloader_;
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_ARCHIVE_SERVER_H_
