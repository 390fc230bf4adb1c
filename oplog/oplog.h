// Oplog: a durable local log of accepted increments — the API's write-ahead log and the
// queue its deliveries to the realtime shards read from (docs/architecture.md#the-oplog; docs/oplog.md).
//
// Records are opaque payloads. Each gets a sequence number: global, strictly increasing,
// starting at 1 and continuing across restarts and segment files. Numbers may have gaps
// (the numbers of records whose write failed are never reused), so a consumer asks for
// "records after seq S", never for "seq S+1".
//
// Writing. Append() runs on the caller's thread (the API's event loop) and never blocks on
// the disk: it frames the record into an in-memory queue and returns its seq. One sync
// thread writes the queue to the active segment file and makes it durable according to
// the policy:
//   always  each record is written and fdatasync'ed on its own, one after the other;
//   batch   everything queued is written with one write and one fdatasync, then the next
//           batch (group commit: a record waits at most for the sync in flight plus its
//           own, the 5 ms bound of docs/architecture.md#the-oplog on any disk that syncs in 2.5 ms);
//   none    written without fdatasync; durable_seq() covers a record as soon as it is
//           appended.
// Under `batch` and `none` the sync thread writes what it took as compressed batches
// (batch.h: zstd, 5x smaller on the API's payloads), before the write, so Append never pays
// for it; `always` writes each record as a frame of its own.
// After each write (and sync) the sync thread calls Options::on_sync with a SyncReport in
// seq order: "every record <= durable_seq is durable, except those reported failed". A
// write that fails (disk full, I/O error) is cut back off the file, so the log holds only
// whole records; its records are reported failed with the error text and never appear in
// the log, and the next batch is tried afresh (appends work again once space returns).
//
// Segments rotate when the next write would pass Options::segment_bytes or when the UTC
// hour changes; a closed segment is always fdatasync'ed first. By default a segment is
// written into a file prepared (zero-filled and synced) ahead of time on a thread of its
// own (prepared_segment.h), so a group commit flushes data only; it ends in zeros until it
// is closed, when it is trimmed to its records.
//
// Recovery (Open). Every segment is read and every frame checked. A torn or corrupt tail
// of the last segment (a frame cut short or failing its checksum, with no whole record
// after it) is cut off and reported in recovery(); zeros after the records (the unused rest
// of a prepared file) are trimmed, never reported as loss. Damage anywhere else — in an older
// segment, or followed by whole records — is a hard error naming the file and the offset;
// nothing is ever skipped silently.
//
// Reading: NewReader() (reader.h) gives a cursor-free iterator over records up to the
// readable limit (durable records; under `none`, written ones).
//
// Cursors (cursors.h). SetCursor(name, seq) records a consumer's position at once (for
// backlog figures) and persists it from the sync thread at most every
// Options::cursor_save_interval, without blocking the caller. Since a cursor is only ever
// set to what was delivered, a saved cursor lags the true position at worst; after a
// crash those records are delivered again, which the realtime tier's per-source
// high-water marks make harmless.
//
// Retention. A segment is deleted when it is not the active one, every saved cursor is at
// or past its last record, there is at least one cursor, and it was last written longer
// than Options::retention ago. Files in the directory that are not segments are never
// touched.
//
// Threading: Append, SetCursor, the getters and Stats may be called from any thread; the
// API calls them from its loop thread. One process holds a directory at a time (flock on
// DIR/LOCK).
#ifndef CLICKATRON_OPLOG_OPLOG_H_
#define CLICKATRON_OPLOG_OPLOG_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/latency.h"
#include "base/status.h"
#include "oplog/batch.h"
#include "oplog/cursors.h"
#include "oplog/prepared_segment.h"

namespace clickatron::oplog {

struct SegmentFile;  // segment.h
struct SegmentScan;

class Reader;

enum class SyncPolicy { kAlways, kBatch, kNone };

// "always" | "batch" | "none".
Result<SyncPolicy> ParseSyncPolicy(std::string_view text);
const char* SyncPolicyName(SyncPolicy policy);

// One report of the sync thread, delivered in seq order.
struct SyncReport {
  // Every record with seq <= durable_seq is durable, except the failed ones reported so far.
  uint64_t durable_seq = 0;
  // When failed_last != 0: the records failed_first..failed_last were not stored.
  uint64_t failed_first = 0;
  uint64_t failed_last = 0;
  std::string error;  // why they failed, e.g. "write DIR/seg-...log: No space left on device"
};

struct Options {
  SyncPolicy sync = SyncPolicy::kBatch;
  uint64_t segment_bytes = 64u << 20;
  // Write segments into files zero-filled and synced ahead of time (prepared_segment.h), so
  // a group commit flushes data only: fdatasync 0.34 -> 0.15 ms p50 on the development disk
  // (docs/benchmarks.md). Off, or short of free space, segments grow by appending.
  bool prepare_segments = true;
  std::chrono::seconds retention = std::chrono::hours(72);
  // Write each group commit as compressed batches (batch.h) under `batch` and `none`:
  // 122 -> 24.6 bytes an event on the demo workload (docs/benchmarks.md#oplog-compression).
  // Off, every record is a frame of its own (as logs before compressed batches were).
  bool compress = true;
  // Appends fail ("write queue is full") while this much is queued and not yet written,
  // so a stalled disk turns into errors instead of unbounded memory.
  size_t max_queued_bytes = 64u << 20;
  std::chrono::milliseconds cursor_save_interval{100};
  // How often the sync thread applies retention by itself.
  std::chrono::seconds retention_check_interval{60};
  // Called on the sync thread after each write/sync; must be quick (hand off to a loop).
  std::function<void(const SyncReport&)> on_sync;
  // Wall clock in unix seconds, for hour rotation and segment ages (tests replace it).
  std::function<int64_t()> clock;
};

// What Open found and repaired.
struct Recovery {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t last_seq = 0;
  uint64_t dropped_bytes = 0;    // cut off the tail of the last segment
  uint64_t dropped_records = 0;  // frames (whole or partial) in that tail
  uint64_t trimmed_bytes = 0;    // zeros trimmed off segments written into prepared files
  std::string message;           // "cut 37 bytes (1 record: bad checksum (seq 12)) off FILE at offset N"
};

struct CursorStats {
  std::string name;
  uint64_t seq = 0;        // as last set
  uint64_t saved_seq = 0;  // as on disk
  uint64_t backlog = 0;    // last_seq - seq
};

struct Stats {
  SyncPolicy policy = SyncPolicy::kBatch;
  uint64_t segments = 0;
  uint64_t bytes = 0;           // in segment files
  uint64_t first_seq = 0;       // oldest record kept; 0 when the log is empty
  uint64_t last_seq = 0;        // last assigned
  uint64_t durable_seq = 0;
  uint64_t queued_bytes = 0;    // appended, not yet written
  uint64_t appends = 0;         // since open
  uint64_t syncs = 0;           // fdatasyncs since open
  uint64_t failed_records = 0;  // since open
  std::string last_error;       // of the last failed write, "" if none
  std::string cursor_error;     // of the last cursor save, "" when it succeeded
  std::string damaged;          // why appends are refused until a restart, "" normally
  uint64_t prepared_segments = 0;   // segments written into prepared (zero-filled) files
  std::string prepare_error;        // why the last preparation did not happen, "" normally
  LatencySnapshot sync_latency;     // one fdatasync, microseconds
  LatencySnapshot durable_latency;  // append to durable, per record, microseconds
  std::vector<CursorStats> cursors;
};

class Oplog {
 public:
  // Opens (creating if needed) the log in dir, recovers it and starts the sync thread.
  static Result<std::unique_ptr<Oplog>> Open(const std::string& dir, Options options);

  // Writes and syncs whatever is queued, saves the cursors, stops the sync thread.
  ~Oplog();
  Oplog(const Oplog&) = delete;
  Oplog& operator=(const Oplog&) = delete;

  // Queues one record and returns its seq, or an error (payload empty or larger than
  // kMaxPayload, write queue full, log damaged). Never waits for the disk.
  Result<uint64_t> Append(std::string_view payload);

  uint64_t last_seq() const;
  // See SyncReport::durable_seq. Under `none`, equal to last_seq().
  uint64_t durable_seq() const { return durable_seq_.load(std::memory_order_acquire); }

  // Blocks until every record appended before the call is durable or failed; an error
  // when a record appended since the previous Sync() failed. For shutdown, tools and
  // tests, not for the event loop.
  Status Sync();

  const Recovery& recovery() const { return recovery_; }
  const std::string& dir() const { return dir_; }
  SyncPolicy policy() const { return options_.sync; }

  // The cursor's seq (0 for a cursor never set).
  uint64_t cursor(std::string_view name) const;
  // Sets a cursor (creating it); an error for a bad name or a seq past last_seq().
  Status SetCursor(std::string_view name, uint64_t seq);
  // Forgets a cursor (a consumer that is gone would otherwise hold retention back forever).
  Status RemoveCursor(std::string_view name);
  // Writes the cursors now (blocking), instead of waiting for the sync thread.
  Status SaveCursors();

  // Deletes the segments retention allows at unix time now; returns how many.
  Result<size_t> RemoveExpiredSegments(int64_t now);

  Stats GetStats() const;

  // A reader over this log. REQUIRES: destroyed before the Oplog.
  std::unique_ptr<Reader> NewReader();

 private:
  friend class Reader;

  // A segment as the writer and readers know it.
  struct Segment {
    uint64_t name_seq = 0;
    std::string path;
    uint64_t first_seq = 0;  // first record, 0 while empty
    uint64_t last_seq = 0;   // last readable record, 0 while empty
    uint64_t bytes = 0;      // readable bytes (whole records, durable unless `none`)
    int64_t mtime = 0;       // unix seconds of the last write
  };

  Oplog(std::string dir, Options options);
  Status Recover();
  Status DropTornTail(const SegmentFile& file, const SegmentScan& scan, bool newest);  // a step of Recover
  void SyncLoop();
  // Writes (and syncs) frames first..last, reporting the outcome.
  void WriteBatch(std::string_view frames, uint64_t first, uint64_t last, uint64_t since_us);
  Status WriteAndSync(std::string_view frames, uint64_t first, uint64_t last);
  Status EnsureActiveSegment(uint64_t first_seq, size_t bytes);
  // Trims a prepared segment to its records, syncs and closes the active segment.
  Status CloseActiveSegment();
  Status CutBack(Status cause, uint64_t size);
  void Report(const Status& status, uint64_t first, uint64_t last, uint64_t since_us);
  Status SaveCursorsIfDue(bool force);
  int64_t Now() const;

  // For readers: the segment holding records after `after`, as a copy. False if none.
  bool LocateSegment(uint64_t after, Segment* out) const;
  // The segment after the one named name_seq. False if none.
  bool NextSegment(uint64_t name_seq, Segment* out) const;
  // The readable bytes of the segment named name_seq and whether it is the newest one.
  // False when it is gone (retention deleted it, so it was complete).
  bool SegmentLimit(uint64_t name_seq, uint64_t* bytes, bool* newest) const;

  const std::string dir_;
  const Options options_;
  Recovery recovery_;
  int lock_fd_ = -1;

  // Owned by the sync thread once it runs.
  int active_fd_ = -1;
  uint64_t active_size_ = 0;
  int64_t active_hour_ = 0;
  bool active_prepared_ = false;  // the active segment ends in zeros past active_size_
  std::string active_path_;
  std::string writing_;  // the batch being written; swapped with queue_
  BatchEncoder encoder_;
  std::string encoded_;  // writing_ as compressed batches
  int64_t last_retention_ = 0;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the sync thread waits for work
  std::condition_variable done_cv_;  // Sync() waits for reports
  std::string queue_;                // framed records not yet taken by the sync thread
  uint64_t queue_first_ = 0, queue_last_ = 0;
  uint64_t queue_since_us_ = 0;      // when the oldest queued record was appended
  uint64_t next_seq_ = 1;
  uint64_t settled_seq_ = 0;         // highest seq durable or failed
  uint64_t last_failed_ = 0;         // highest failed seq
  uint64_t sync_checked_ = 0;        // the last seq a Sync() call waited for
  std::string last_error_;
  Status damaged_;                   // set when a failed write could not be cut back
  std::vector<Segment> segments_;
  CursorMap cursors_;
  CursorMap saved_cursors_;
  bool cursors_dirty_ = false;
  uint64_t last_cursor_save_us_ = 0;
  std::string cursor_error_;         // of the last failed cursor save, "" once one succeeds
  bool stop_ = false;
  uint64_t appends_ = 0, syncs_ = 0, failed_records_ = 0;

  std::atomic<uint64_t> durable_seq_{0};
  std::mutex cursor_save_mu_;     // one SaveCursors at a time
  std::mutex retention_mu_;       // one retention pass at a time
  LatencyHistogram sync_latency_;     // one fdatasync; the sync thread records
  LatencyHistogram durable_latency_;  // append → durable, per record; the sync thread records
  std::unique_ptr<SegmentPreparer> preparer_;  // null when Options::prepare_segments is off
  std::thread sync_thread_;
};

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_OPLOG_H_
