// Sender: one delivery stream — the oplog's lines for ONE ring slot (day % 3) of ONE realtime
// shard (docs/api-write.md#delivery). A shard has three, grouped by ShardDelivery
// (shard_delivery.h), so that an increment that must wait for its slot (503
// SLOT_NOT_RELEASED: tomorrow's day, its slot still holding an unreleased older day) never
// delays the days of the other slots.
//
// A sender runs on the API's event loop and has at most one request in flight. It reads
// the durable records after its cursor, keeps the lines routed to its shard (see
// incr_payload.h) whose day is in its slot, and makes a "round" of them: whole oplog records
// only (a record's lines share its seq), at most max_round_bytes of request body, and one
// day (a slot holds one day at a time). Equal keys are summed within the round (lookups
// sent once). The round is sent as `POST /set?day=D` with its lookup records (so a query
// rarely sees a hash before its original) and then `POST /incr?source=<source>&seq=N`, N
// being the seq of the round's last record. The realtime shard skips a slot's batch whose
// seq is <= the slot's mark for the source, so re-sending a round is harmless; the three
// streams of a shard share the source, and each moves only its own slot's marks.
//
// Every /incr carries `X-Clickatron-Sender: <options.sender_id>` (16 hex digits the API
// draws at start): the shard lets one sender at a time write a source.
//
// Answers (docs/api-write.md#answers-of-the-realtime-shard):
//   200                       next step; after the last one the cursor moves to N.
//   409 DAY_CLOSED,           the day is closed on the shard (the nightly is archiving it)
//   409 DAY_EXPIRED           or gone from its ring: the round is LATE data. A refused /set
//                             keeps its lookups with the round and the /incr goes anyway:
//                             200 says the round was applied before (a re-send), 409 that it
//                             is late. A late round (its counters and lookups) goes to
//                             the late store (late_store.h, durable before this returns;
//                             a part already stored is skipped), is logged, and delivery
//                             goes on.
//   503 SLOT_NOT_RELEASED     the slot still holds an older day the nightly has not
//                             released: wait (backoff), reported in /stats and the log.
//                             Only this stream waits.
//   409 SOURCE_IN_USE         another sender wrote this source within the shard's lease:
//                             wait (backoff), reported in /stats and the log.
//   X-Realtime-Source-Mark    on an /incr answer, a mark past this API's oplog head: some
//     past the oplog head     other writer uses this source (a node-id clash) or this
//                             oplog was reset — SOURCE_CONFLICT in /stats and the log, and
//                             the round is retried, never taken as delivered.
//   transport error           the shard may have restarted and lost what it acknowledged
//                             since its last commit (--sync-interval): the sender rewinds
//                             to its saved cursor and re-sends every round since, with the
//                             same boundaries (DeliveryRounds), then goes on.
//   another instance          any answer naming a process other than the last one (a
//                             restart the client's silent reconnect hid; its /incr answers
//                             412 INSTANCE_CHANGED, nothing applied): rewind the same way.
//   anything else             retried with capped exponential backoff, error in /stats
//                             (a 400 included: nothing acknowledged is ever dropped).
//
// After `clickatron-oplog replay --skip-through DAY` the sender drops its lines of days <= DAY
// in the records its shard had acknowledged before the replay (oplog/replay_skip.h): the
// archive holds them, so sending them again would count them twice.
//
// The cursor saved in the oplog stays behind every round the shard has not made durable,
// so that even after a crash of the API the rounds a shard may have lost are re-sent. The
// shard says how far it is with each /incr answer (X-Realtime-Synced-Seq: the source's
// highest seq acknowledged before its last durable flush, wire/headers.h). That is one
// number per source, and the three streams of a shard interleave their seqs, so a round is
// settled only once the synced seq passes its CEILING: the highest seq any stream of the
// shard had sent when the round's answer came (and the log's last seq at start, for what
// earlier processes sent). A synced seq above it names a batch sent after the answer, so
// the flush that made it durable came after the round. (A shard that does not report is
// trusted after cursor_lag.) A clean stop saves the delivered position. Acceptance never
// waits for a sender.
//
// A stream with rounds in doubt and nothing to send asks the shard which process it is
// (GET /ping, X-Realtime-Instance) every probe interval, doubling from probe_initial_ms to
// probe_max_ms: a shard killed after acknowledging rounds and started again is then noticed
// without new traffic (another instance: rewind and re-send, as above). Without it such a
// round was lost for good when no later round of that slot came (a day's last increments).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/delivery_rounds.h"
#include "api/late_store.h"
#include "base/latency.h"
#include "base/status.h"
#include "net/host_port.h"
#include "oplog/replay_skip.h"

struct event;
struct event_base;

namespace clickatron {

namespace net {
class HttpClient;
class JsonWriter;
class StatsWriter;
struct HttpResponse;
}  // namespace net
namespace oplog {
class Oplog;
class Reader;
}  // namespace oplog

struct SenderOptions {
  // This API process's id, sent as X-Clickatron-Sender with every /incr (wire/headers.h):
  // 16 lowercase hex digits drawn once per process (ApiServer fills it).
  std::string sender_id;
  size_t max_round_bytes = 512 * 1024;  // request body (the realtime accepts 1 MiB)
  size_t read_records = 1024;           // oplog records per Read
  int request_timeout_ms = 5000;
  int backoff_initial_ms = 10;
  int backoff_max_ms = 1000;
  int64_t cursor_lag_ms = 3000;         // for a shard that does not report its synced seq
  int probe_initial_ms = 100;           // rounds in doubt, nothing to send: ask the shard's
  int probe_max_ms = 2000;              // instance this often (doubling; reset by a round)
  // Rounds start at most this often: under a steady load a round then carries a few ms of
  // records instead of one sync's worth, which costs both tiers far less CPU per event
  // (see docs/benchmarks.md) for a few ms of delivery lag. 0 = no pacing.
  int min_round_interval_ms = 5;
  // The first record of this oplog's identity (oplog/identity.h, own_from_seq): the records
  // before it (a forked copy's, shared with the original) are never sent from here.
  uint64_t own_from_seq = 1;
  // Told of a SOURCE_CONFLICT (a shard holds a seq of this source past the oplog's head):
  // the API then refuses increments (oplog/identity.h).
  std::function<void(const std::string& why)> on_source_conflict;
};

// Records appended to the oplog and when (a sparse index, one entry per millisecond at
// most), shared by the senders for backlog seconds and delivery lag.
//
// Bounded: while a shard is down nothing is trimmed, and one entry per millisecond would be
// ~1.4 GB a day. At kMaxEntries the index drops every other entry (the first and the last
// stay), so it never holds more than kMaxEntries (about 1 MiB) and its resolution halves
// each time: an hour's outage at any rate keeps one entry per 55-110 ms. TimeAfter stays an upper
// bound of a record's age, just a looser one for old records (docs/operations.md#bounds).
class AppendTimes {
 public:
  static constexpr size_t kMaxEntries = 65536;

  void Add(uint64_t seq, uint64_t micros);
  // When the first record after `seq` was appended (an upper bound of its age), or 0.
  uint64_t TimeAfter(uint64_t seq) const;
  // Forgets entries for records <= seq.
  void TrimThrough(uint64_t seq);
  size_t size() const { return entries_.size(); }

 private:
  std::deque<std::pair<uint64_t, uint64_t>> entries_;  // (seq, monotonic micros)
};

// What the streams of one shard share: the highest seq any of them has sent in an /incr
// (the ceiling of a round, above). Starts at the log's last seq: earlier processes sent
// nothing past it.
struct ShardSends {
  uint64_t max_sent = 0;
  // The shard's data directory its streams deliver to (wire/headers.h, X-Realtime-Ring):
  // one for the shard, learnt from the first answer naming it and kept in each stream's
  // DeliveredRingPath (ring_paths), so that a stream that never sent yet still names it.
  std::string ring;
  std::vector<std::string> ring_paths;
};

// Counters of one stream, summed per shard in /stats.
struct StreamCounters {
  uint64_t rounds = 0, delivered = 0, duplicate = 0;
  uint64_t late_lines = 0, late_parts = 0, late_duplicate_parts = 0;
  uint64_t source_in_use_refusals = 0, source_conflicts = 0;
  uint64_t requests = 0, failures = 0, rewinds = 0, skipped_records = 0;
  uint64_t restarts = 0;  // the shard's instance changed (wire/headers.h)
  uint64_t probes = 0;    // GET /ping sent while rounds were in doubt and nothing to send
};

class Sender {
 public:
  // REQUIRES: base, client, log, times, late and sends outlive the sender; 0 <= slot < 3.
  Sender(event_base* base, net::HttpClient* client, oplog::Oplog* log, const AppendTimes* times,
         LateStore* late, uint32_t shard, int slot, net::HostPort to, std::string source,
         ShardSends* sends, SenderOptions options = {});
  ~Sender();
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // Loads the cursor and the rounds file; `last_seq` is the last record of the recovered log.
  Status Start(uint64_t last_seq);
  // New durable records may be readable: start a round if idle.
  void Kick();
  // Saves the delivered position as the cursor (a clean shutdown: nothing is in doubt).
  void Stop();

  // The oplog cursor name of a stream: "realtime-<shard>.slot-<slot>"; its rounds file and
  // replay skip rule are named after it.
  static std::string CursorName(uint32_t shard, int slot);

  int slot() const { return slot_; }
  uint64_t cursor() const { return cursor_; }
  uint64_t saved_cursor() const { return saved_cursor_; }
  uint64_t delivered_records() const { return c_.delivered; }
  // Oplog lines of the parts this process stored as late.
  uint64_t late_records() const { return c_.late_lines; }
  const StreamCounters& counters() const { return c_; }
  bool idle() const { return state_ == State::kIdle; }  // a probe in flight included
  // "idle", "sending", "retrying" or "stopped".
  const char* state_name() const;
  size_t rounds_in_doubt() const { return rounds_.size(); }
  size_t replay_pending() const { return replay_.size(); }
  int64_t shard_synced_seq() const { return shard_synced_; }
  bool waiting_slot_release() const { return waiting_release_; }
  const std::string& waiting_slot_release_message() const { return waiting_release_message_; }
  bool source_in_use() const { return source_in_use_; }
  bool ring_changed() const { return ring_changed_; }
  const std::string& ring_message() const { return ring_message_; }
  bool source_conflict() const { return source_conflict_; }
  const std::string& source_message() const { return source_message_; }
  const std::string& last_error() const { return last_error_; }
  uint64_t last_error_us() const { return last_error_us_; }  // monotonic, 0: none
  LatencySnapshot delivery_lag() const { return lag_.Snapshot(); }
  // {"slot": .., "cursor": .., "backlog_records": .., "backlog_seconds": .., ...}
  void WriteStatsJson(net::StatsWriter* w, uint64_t last_seq) const;
  // Seconds since the first record after the cursor was appended (0 when caught up).
  double BacklogSeconds(uint64_t last_seq) const;

 private:
  enum class State { kIdle, kSending, kBackoff, kStopped };

  struct Entry {
    uint32_t key_offset, key_size, value_offset, value_size;
    int64_t delta;
    bool lookup;
  };
  // The round being sent: one day of this slot.
  struct Part {
    int64_t day = -1;
    std::string set_body;    // lookup lines, `_l|hash,escaped\n`
    std::string incr_body;   // `key,delta\n`
    uint64_t lines = 0;      // oplog lines (before summing) this round carries
    bool set_done = false;         // its /set went through
    bool lookups_refused = false;  // its /set met DAY_CLOSED or DAY_EXPIRED
    bool lookups_late = false;     // ... and its /incr was applied: the lookups are late
    std::string refusal;           // that refusal, "409 DAY_CLOSED" (for the log)
    bool done = false;             // nothing left to send
  };
  struct Round {
    uint64_t end = 0;
    uint64_t acked_us = 0;   // 0 while not delivered
    uint64_t ceiling = 0;    // ShardSends::max_sent when it was delivered
  };

  // Reads and groups the next round; false when there is nothing to send (caught up or a
  // read error, which is retried).
  bool BuildRound();
  void ResetRound();
  Status CollectRecords(uint64_t* end, bool* any_lines);
  // Adds this stream's lines of one record to the round. False when the record holds a
  // day other than the round's (it starts the next round).
  bool AddRecord(uint64_t seq, std::string_view payload);
  void GroupEntries();
  void SendStep();
  void SendIncr();
  void OnResponse(net::HttpResponse&& r, bool is_set);
  // An answer naming another process than the last one: rewinds (after Fail) and false.
  bool CheckInstance(const net::HttpResponse& r);
  // The shard's data directory (wire/headers.h, X-Realtime-Ring): the first ring the
  // shard's streams hear of is kept (ShardSends::ring) and named in every request; a 412
  // RING_CHANGED (the shard lost that directory) holds the stream until the replay procedure
  // (which removes the files) or the old directory is back. False after Fail().
  bool CheckRing(const net::HttpResponse& r);
  void OnAccepted(const net::HttpResponse& r, bool is_set);
  void OnRefused(const net::HttpResponse& r, bool is_set);
  void NoteSlotNotReleased(std::string_view body);
  // Stores the round (its counters when with_counters, its lookups when refused) in the
  // late store; the round is done unless only its lookups were stored before its /incr.
  // False after Fail() when the store failed.
  bool StoreLate(bool with_counters, const std::string& refusal);
  void LogLate(const LatePart& late, uint64_t id, const std::string& refusal) const;
  // Checks an /incr answer's X-Realtime-Source-Mark against the oplog head; false after
  // Fail() on a conflict.
  bool CheckSourceMark(const net::HttpResponse& r);
  void RoundDone();
  // Caught up with rounds in doubt: arms the probe timer (once).
  void ProbeLater();
  void OnProbeAnswer(net::HttpResponse&& r);
  void Fail(const std::string& error, bool rewind);
  void Rewind();
  void ScheduleRetry();
  void AdvanceSavedCursor(bool force);
  std::string Where() const;  // "realtime shard 0 slot 2 (127.0.0.1:7101)"
  static void OnTimer(int fd, short what, void* arg);
  static void OnPersistTimer(int fd, short what, void* arg);
  static void OnPaceTimer(int fd, short what, void* arg);
  static void OnProbeTimer(int fd, short what, void* arg);

  event_base* base_;
  net::HttpClient* client_;
  oplog::Oplog* log_;
  const AppendTimes* times_;
  LateStore* late_;
  const uint32_t shard_;
  const int slot_;
  const net::HostPort to_;
  const std::string source_;
  const std::string cursor_name_;
  ShardSends* sends_;
  const SenderOptions options_;
  std::unique_ptr<oplog::Reader> reader_;
  DeliveryRounds rounds_file_;
  event* retry_timer_ = nullptr;
  event* persist_timer_ = nullptr;
  event* pace_timer_ = nullptr;
  bool pacing_ = false;           // pace_timer_ is armed
  event* probe_timer_ = nullptr;
  bool probe_armed_ = false;      // probe_timer_ is armed
  bool probing_ = false;          // a GET /ping is in flight (no round starts meanwhile)
  int probe_ms_ = 0;              // the next probe's delay; 0: probe_initial_ms
  uint64_t last_round_us_ = 0;    // when the last round was built

  State state_ = State::kIdle;
  uint64_t cursor_ = 0;           // delivered through this seq
  uint64_t saved_cursor_ = 0;     // last value given to the oplog
  uint64_t singles_until_ = 0;    // records <= this go one per round (untrusted restart)
  std::deque<uint64_t> replay_;   // round ends to cut at again, in order
  oplog::ReplaySkip skip_;        // lines `clickatron-oplog replay --skip-through` drops
  std::deque<Round> rounds_;      // rounds past saved_cursor_, oldest first
  int backoff_ms_ = 0;

  // The round being sent.
  uint64_t round_end_ = 0;
  uint64_t round_start_us_ = 0;   // append time of its first record
  std::string arena_;             // this stream's lines of the round, "key,value" each
  std::vector<Entry> entries_;
  Part part_;
  bool has_round_ = false;        // part_ is a round being sent
  std::string path_;              // scratch for the request path
  std::string instance_;          // the shard's process, from its last answer (wire/headers.h)
  int64_t shard_synced_ = -1;     // the source's highest seq the shard says is durable (ditto)
  bool shard_reports_synced_ = false;

  // Stats.
  StreamCounters c_;
  std::string last_error_;
  uint64_t last_error_us_ = 0;
  bool waiting_release_ = false;
  std::string waiting_release_message_;
  bool ring_changed_ = false;     // the shard answers 412 RING_CHANGED: delivery waits for the replay
  std::string ring_message_;
  bool source_in_use_ = false;    // the last /incr answer was 409 SOURCE_IN_USE
  bool source_conflict_ = false;  // the last /incr answer showed SOURCE_CONFLICT
  std::string source_message_;    // the message of either
  LatencyHistogram lag_;     // append of a round's first record → round delivered
};

}  // namespace clickatron
