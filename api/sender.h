// Sender: delivers the oplog's records to ONE realtime shard (docs/api-write.md#delivery, 4).
//
// A sender runs on the API's event loop and has at most one request in flight. It reads
// the durable records after its cursor, keeps the lines routed to its shard (see
// incr_payload.h) and makes a "round" of them: whole oplog records only (a record's lines
// share its seq), at most max_round_bytes of request body, and never two days that share
// a ring slot (day % 3). Equal keys are summed within the round (lookups sent once). The
// round is sent day by day — for each day `POST /set?day=D` with its lookup records (so a
// query rarely sees a hash before its original) and then `POST /incr?source=<node-id>&
// seq=N`, N being the seq of the round's last record. Each day touches one slot, and the
// realtime shard skips a slot's batch whose seq is <= the slot's mark for the source, so
// re-sending any part of a round is harmless.
//
// Every /incr carries `X-Clickatron-Sender: <options.sender_id>` (16 hex digits the API
// draws at start): the shard lets one sender at a time write a source.
//
// Answers (docs/api-write.md#answers-of-the-realtime-shard):
//   200                       next step; after the last one the cursor moves to N.
//   409 DAY_CLOSED,           the day is closed on the shard (the nightly is archiving it)
//   409 DAY_EXPIRED           or gone from its ring: the part is LATE data. A refused /set
//                             keeps its lookups with the part and the /incr goes anyway:
//                             200 says the part was applied before (a re-send), 409 that it
//                             is late. A late part (its counters and lookups) goes to
//                             the late store (late_store.h, durable before this returns;
//                             a part already stored is skipped), is logged, and delivery
//                             goes on with the rest.
//   503 SLOT_NOT_RELEASED     the slot still holds an older day the nightly has not
//                             released: wait (backoff), reported in /stats and the log.
//   409 SOURCE_IN_USE         another sender wrote this source within the shard's lease:
//                             wait (backoff), reported in /stats and the log.
//   X-Realtime-Source-Mark    on an /incr answer, a mark past this API's oplog head: some
//     past the oplog head     other writer uses this source (a node-id clash) or this
//                             oplog was reset — SOURCE_CONFLICT in /stats and the log, and
//                             the part is retried, never taken as delivered.
//   400 COUNTER_OVERFLOW      one summed line would take a counter past int64: that line
//                             is dropped (logged as data loss, overflow_records), the
//                             rest re-sent with the same seq (nothing was applied).
//   transport error           the shard may have restarted and lost what it acknowledged
//                             since its last commit (--sync-interval): the sender rewinds
//                             to its saved cursor and re-sends every round since, with the
//                             same boundaries (DeliveryRounds), then goes on.
//   another instance          any answer naming a process other than the last one (a
//                             restart the client's silent reconnect hid; its /incr answers
//                             412 INSTANCE_CHANGED, nothing applied): rewind the same way.
//   anything else             retried with capped exponential backoff, error in /stats.
//
// After `clickatron-oplog replay --skip-through DAY` the sender drops its lines of days <= DAY
// in the records its shard had acknowledged before the replay (oplog/replay_skip.h): the
// archive holds them, so sending them again would count them twice.
//
// The cursor saved in the oplog stays behind every round the shard has not made durable
// (it says how far it is with each answer: realtime/instance.h; a shard that does not say
// is trusted after cursor_lag), so that even after a crash of the API the rounds a shard
// may have lost are re-sent. A clean stop saves the delivered position. Acceptance never
// waits for a sender.
#pragma once

#include <cstdint>
#include <deque>
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
struct HttpResponse;
}  // namespace net
namespace oplog {
class Oplog;
class Reader;
}  // namespace oplog

struct SenderOptions {
  // This API process's id, sent as X-Clickatron-Sender with every /incr (realtime/instance.h):
  // 16 lowercase hex digits drawn once per process (ApiServer fills it).
  std::string sender_id;
  size_t max_round_bytes = 512 * 1024;  // request body (the realtime accepts 1 MiB)
  size_t read_records = 1024;           // oplog records per Read
  int request_timeout_ms = 5000;
  int backoff_initial_ms = 10;
  int backoff_max_ms = 1000;
  int64_t cursor_lag_ms = 3000;         // for a shard that does not report its synced seq
  // Rounds start at most this often: under a steady load a round then carries a few ms of
  // records instead of one sync's worth, which costs both tiers far less CPU per event
  // (see docs/benchmarks.md) for a few ms of delivery lag. 0 = no pacing.
  int min_round_interval_ms = 5;
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

class Sender {
 public:
  // REQUIRES: base, client, log, times and late outlive the sender.
  Sender(event_base* base, net::HttpClient* client, oplog::Oplog* log, const AppendTimes* times,
         LateStore* late, uint32_t shard, net::HostPort to, std::string source, SenderOptions options = {});
  ~Sender();
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // Loads the cursor and the rounds file; `last_seq` is the last record of the recovered log.
  Status Start(uint64_t last_seq);
  // New durable records may be readable: start a round if idle.
  void Kick();
  // Saves the delivered position as the cursor (a clean shutdown: nothing is in doubt).
  void Stop();

  // The oplog cursor name of a shard: "realtime-<shard>".
  static std::string CursorName(uint32_t shard);

  uint64_t cursor() const { return cursor_; }
  uint64_t delivered_records() const { return delivered_lines_; }
  // Oplog lines of the parts this process stored as late.
  uint64_t late_records() const { return late_lines_; }
  bool idle() const { return state_ == State::kIdle; }
  // {"address": .., "cursor": .., "backlog_records": .., "backlog_seconds": .., ...}
  void WriteStatsJson(net::JsonWriter* w, uint64_t last_seq) const;

 private:
  enum class State { kIdle, kSending, kBackoff, kStopped };

  struct Entry {
    int64_t day;
    uint32_t key_offset, key_size, value_offset, value_size;
    int64_t delta;
    bool lookup;
  };
  struct DayPart {
    int64_t day;
    std::string set_body;    // lookup lines, `_l|hash,escaped\n`
    std::string incr_body;   // `key,delta\n`
    uint64_t lines = 0;      // oplog lines (before summing) this part carries
    bool lookups_refused = false;  // its /set met DAY_CLOSED or DAY_EXPIRED
    bool lookups_late = false;     // ... and its /incr was applied: the lookups are late
    std::string refusal;           // that refusal, "409 DAY_CLOSED" (for the log)
  };
  struct Round {
    uint64_t end = 0;
    uint64_t acked_us = 0;   // 0 while not delivered
  };

  // Reads and groups the next round; false when there is nothing to send (caught up or a
  // read error, which is retried).
  bool BuildRound();
  Status CollectRecords(uint64_t* end, bool* any_lines);
  void GroupEntries();
  void SendStep();
  void OnResponse(net::HttpResponse&& r, bool is_set);
  // A 400 COUNTER_OVERFLOW names the counter in its message: drop its line from the
  // current /incr (loudly, quoting body) so one runaway counter cannot stall the shard.
  // False if not found.
  bool DropOverflowingLine(std::string_view message, std::string_view body);
  // Stores the current part (its counters when with_counters, its lookups when refused) in
  // the late store and moves to the next part. False after Fail() when the store failed.
  bool StoreLate(bool with_counters, const std::string& refusal);
  // Checks an /incr answer's X-Realtime-Source-Mark against the oplog head; false after
  // Fail() on a conflict.
  bool CheckSourceMark(const net::HttpResponse& r);
  void RoundDone();
  void Fail(const std::string& error, bool rewind);
  void ScheduleRetry();
  void AdvanceSavedCursor(bool force);
  static void OnTimer(int fd, short what, void* arg);
  static void OnPersistTimer(int fd, short what, void* arg);
  static void OnPaceTimer(int fd, short what, void* arg);

  event_base* base_;
  net::HttpClient* client_;
  oplog::Oplog* log_;
  const AppendTimes* times_;
  LateStore* late_;
  const uint32_t shard_;
  const net::HostPort to_;
  const std::string source_;
  const std::string cursor_name_;
  const SenderOptions options_;
  std::unique_ptr<oplog::Reader> reader_;
  DeliveryRounds rounds_file_;
  event* retry_timer_ = nullptr;
  event* persist_timer_ = nullptr;
  event* pace_timer_ = nullptr;
  bool pacing_ = false;           // pace_timer_ is armed
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
  std::string arena_;             // this shard's lines of the round, "key,value" each
  std::vector<Entry> entries_;
  std::vector<DayPart> parts_;
  size_t part_ = 0;
  bool set_done_ = false;         // the current part's /set went through
  std::string path_;              // scratch for the request path
  std::string instance_;          // the shard's process, from its last answer (realtime/instance.h)
  int64_t shard_synced_ = -1;     // the highest seq the shard says is durable (ditto)
  bool shard_reports_synced_ = false;

  // Stats.
  uint64_t rounds_sent_ = 0, delivered_lines_ = 0, duplicate_lines_ = 0;
  uint64_t late_lines_ = 0, late_parts_ = 0, late_duplicate_parts_ = 0;
  uint64_t source_in_use_refusals_ = 0, source_conflicts_ = 0;
  uint64_t requests_ = 0, failures_ = 0, rewinds_ = 0, skipped_records_ = 0, overflow_lines_ = 0;
  uint64_t restarts_ = 0;  // the shard's instance changed (realtime/instance.h)
  std::string last_error_;
  uint64_t last_error_us_ = 0;
  bool waiting_release_ = false;
  std::string waiting_release_message_;
  bool source_in_use_ = false;    // the last /incr answer was 409 SOURCE_IN_USE
  bool source_conflict_ = false;  // the last /incr answer showed SOURCE_CONFLICT
  std::string source_message_;    // the message of either
  LatencyHistogram lag_;     // append of a round's first record → round delivered
};

}  // namespace clickatron
