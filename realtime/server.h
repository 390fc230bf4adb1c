// RealtimeServer: the HTTP face of one realtime shard (docs/api.md#clickatron-realtime) over a Ring.
//
//   POST /incr?source=S&seq=N[&instance=I]  body `key,delta` lines → JSON {applied, duplicate, seq}
//                               header X-Clickatron-Sender required (400 SENDER_MISSING,
//                               409 SOURCE_IN_USE), every answer past the secret check has X-Realtime-Source-Mark
//                               (412 INSTANCE_CHANGED when I is not this process: wire/headers.h)
//   POST /set[?day=YYYY-MM-DD]  body `_l|hash,value` lines  → JSON {set}
//   GET  /get?key=K             value\n, or 404 with an empty body
//   GET  /mget?key=A&k=B…       found `key,value\n` lines, request order (more than
//                               --max-mget-keys keys: 400 TOO_MANY_KEYS)
//   GET  /fwmatch?key=P[&limit=N]  `key,value\n` lines in key order over every live slot
//   GET  /fwsum?key={sub}.{ns}|{key}.&from=H&to=H[&limit=N][&after=K]  `subkey,sum\n`: the
//                               subtotals of those records, summed over hours from <= H <= to
//   GET  /export?day=D          the day's slot, streamed, then the #END footer; 404 if not held
//   POST /close?day=D           JSON {day, closed_through, slots_closed}: closes every open day <= D
//   POST /release?day=D         JSON; 404 if no slot holds D, 409 DAY_NOT_CLOSED if D is open
//   GET  /stats, /ping
//
// The cluster secret (docs/operations.md#threat-model): every route but /ping, /get, /mget,
// /fwmatch, /fwsum and /stats (those too with require-secret-for-reads) first checks the
// X-Clickatron-Secret header: 401 SECRET_MISSING, 403 SECRET_WRONG, nothing done.
//
// Bad requests get 400 JSON errors with a "message" naming the problem; refused writes get
// the ring's status (503 SLOT_NOT_RELEASED, 409 DAY_EXPIRED, 409 DAY_CLOSED, 400 COUNTER_OVERFLOW) and
// change nothing; 503 FLUSH_BEHIND when the memtables hold --max-pending-mb (the sender
// retries). One event loop serves everything (the ring is not thread-safe); a timer on it
// starts a flush of the ring every sync interval (ring.h: the flusher thread commits while
// the loop goes on serving), the flusher's eventfd tells the loop when it is durable, and a
// last, synchronous flush runs when the server stops.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <deque>
#include <map>
#include <vector>

#include "base/status.h"
#include "net/http_server.h"
#include "realtime/batch.h"
#include "realtime/ring.h"
#include "wire/headers.h"

struct event;

namespace clickatron::realtime {

class ExportStream;

struct RealtimeOptions {
  std::string data_dir;
  std::string address = "127.0.0.1";
  uint16_t port = 0;
  double sync_interval_seconds = 1.0;
  uint64_t fwmatch_limit = 10000;      // default and maximum /fwmatch lines
  size_t max_body_bytes = 64u << 20;   // one /incr or /set body
  size_t max_pending_bytes = kDefaultMaxPendingBytes;  // memtables before 503 FLUSH_BEHIND
  int64_t source_lease_ms = 10000;     // another sender may take a source over after this (wire/headers.h)
  size_t max_mget_keys = 1000;         // keys one /mget may ask for
  // The cluster secret (net/secret.h): /incr, /set, /export, /close and /release need it;
  // /get, /mget, /fwmatch and /stats too with require_secret_for_reads. Empty: no check,
  // allowed only on a loopback address (Start fails with SECRET_REQUIRED otherwise).
  std::string secret;
  bool require_secret_for_reads = false;
  // Per-client cost limits (docs/operations.md#limits): 256 MiB of bodies being received
  // is four of the largest at once; the rest are refused 503 at once, not buffered.
  net::ServerLimits limits{.max_inflight_body_bytes = 256u << 20};
  SlotOptions slot;
};

class RealtimeServer {
 public:
  explicit RealtimeServer(RealtimeOptions options);
  ~RealtimeServer();
  RealtimeServer(const RealtimeServer&) = delete;
  RealtimeServer& operator=(const RealtimeServer&) = delete;

  // Opens the ring and binds the port.
  Status Start();
  uint16_t port() const { return server_->port(); }
  // Serves until SIGTERM/SIGINT (or Stop()), then commits and closes the ring.
  Status Run();
  void Stop() { server_->Stop(); }

 private:
  struct Counters {
    uint64_t incr_batches = 0, incr_lines = 0, incr_applied = 0, incr_duplicate = 0;
    uint64_t incr_duplicate_batches = 0;
    uint64_t set_lines = 0, closes = 0, releases = 0, exports = 0, export_records = 0;
    uint64_t gets = 0, get_hits = 0, mget_keys = 0, mget_hits = 0, fwmatch_lines = 0;
    uint64_t fwsums = 0, fwsum_records = 0;  // /fwsum requests answered, records they read
    uint64_t bad_requests = 0, refused_not_released = 0, refused_expired = 0, refused_overflow = 0;
    uint64_t refused_instance = 0, refused_ring = 0, refused_behind = 0, refused_closed = 0;
    uint64_t refused_source_in_use = 0;
    uint64_t too_many_keys = 0;
    uint64_t storage_errors = 0, sync_errors = 0;
  };
  // Per source: the highest seq acknowledged, and the highest whose writes are committed
  // and on the device (what survives kill -9 and power loss: docs/realtime.md#durability).
  struct SourceSeq {
    int64_t acked = -1;
    int64_t synced = -1;
  };
  // Per source: the sender id that last wrote (X-Clickatron-Sender) and when (monotonic).
  struct SourceLease {
    std::string sender;
    uint64_t at_micros = 0;
  };

  // The steps of Start, in order.
  Status CheckOptions() const;
  void LoadSourceMarks();
  void AddRoutes();
  void AddLoopEvents();

  // The arguments of an /incr once checked: views into the request.
  struct IncrArgs {
    std::string_view source;
    int64_t seq = 0;
    const char* sender = nullptr;  // X-Clickatron-Sender, 16 lowercase hex digits
  };

  void OnIncr(net::Request& req);
  // The steps of OnIncr; each answers (with the source's mark) and returns false on a refusal.
  bool ReadIncrArgs(net::Request& req, IncrArgs* args);
  bool TakeSourceLease(net::Request& req, const IncrArgs& args);
  bool FailIncr(net::Request& req, std::string_view source, bool batch_read, int code,
                std::string_view status_txt, std::string_view message);  // false
  void OnSet(net::Request& req);
  void OnGet(net::Request& req);
  void OnMget(net::Request& req);
  void OnFwmatch(net::Request& req);
  void OnFwsum(net::Request& req);
  bool ParseLimit(net::Request& req, uint64_t* limit);
  void OnExport(net::Request& req);
  void OnClose(net::Request& req);
  void OnRelease(net::Request& req);
  // /stats and /metrics (net/stats_writer.h): the slots, then the counters.
  void WriteStats(net::StatsWriter& w);
  void WriteSlotStats(net::StatsWriter& w);
  void WriteCounterStats(net::StatsWriter& w);
  void OnPing(net::Request& req);

  std::optional<std::string> RingRefusal(net::Request& req);
  bool RequirePost(net::Request& req);
  bool CheckQuery(net::Request& req);
  // Parses the `day` parameter; replies 400 and returns false when missing or bad.
  bool DayParam(net::Request& req, bool required, int64_t* day);
  void ReplyError(net::Request& req, int code, std::string_view status_txt, std::string_view message);
  void ReplyRefusal(net::Request& req, const WriteOutcome& o);
  // Adds X-Realtime-Source-Mark for source (wire/headers.h): over the days of incr_lines_ when
  // batch_read, else over the slots; -1 when source is empty or has no mark.
  void AddSourceMark(net::Request& req, std::string_view source, bool batch_read);
  // Starts a flush if none runs (else one starts as soon as it ends); learns what is durable.
  void TryFlush();
  // Synchronous: everything acknowledged is durable when it returns (shutdown).
  void SyncAll();
  // Moves synced_seq up to every snapshot whose writes are now durable.
  void NoteDurable();
  static void OnSyncTimer(int fd, short what, void* arg);
  static void OnFlushed(int fd, short what, void* arg);
  static void OnFsynced(int fd, short what, void* arg);

  RealtimeOptions options_;
  std::string instance_;  // wire/headers.h
  std::unique_ptr<net::Server> server_;
  std::unique_ptr<Ring> ring_;
  event* sync_timer_ = nullptr;
  event* flushed_event_ = nullptr;
  event* fsynced_event_ = nullptr;
  bool flush_wanted_ = false;  // the timer fired while a flush was running
  // The acked seqs at one moment, and what must be durable for them to be: the flush
  // started then (its generation), or, when nothing was pending, the FileSyncer round
  // requested by then. Oldest first; at most one per flush or sync tick.
  struct DurableSnapshot {
    uint64_t generation = 0;
    uint64_t fsync_round = 0;
    std::vector<std::pair<std::string, int64_t>> acked;
  };
  std::deque<DurableSnapshot> snapshots_;
  Counters counters_;
  std::map<std::string, SourceSeq, std::less<>> sources_;  // sorted for /stats
  std::map<std::string, SourceLease, std::less<>> leases_;
  std::vector<std::unique_ptr<ExportStream>> exports_;
  std::vector<IncrLine> incr_lines_;      // reused per request
  std::vector<LookupLine> lookup_lines_;  // reused per request
  std::string out_;                       // reused reply buffer
};

}  // namespace clickatron::realtime
