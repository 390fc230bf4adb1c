// Ring: the three slots of one realtime shard and the operations the HTTP layer needs —
// batched exactly-once increments, lookup records, reads, release and durability.
//
// Every write first runs the day state machine (day_state.h) for each day it touches and
// changes nothing if one of them is refused. A day of an /incr batch whose mark for the
// source is already >= seq (from the slot holding the day, or from the marks the shard kept
// when it closed the day: closed_days.h) is a duplicate whatever the day's state. An /incr batch is then accepted slot by slot
// into that slot's memtable (memtable.h), on the event loop, without touching Tokyo
// Cabinet: lines of a slot whose accepted mark for the source is already >= seq are skipped
// as duplicates; the others add to their keys' pending sums and the mark moves to seq. A
// counter whose value (stored + pending) would leave int64 undoes the whole batch (every
// slot) and refuses it. Marks and data of a batch always travel in the same table.
//
// BeginFlush() freezes the memtables and hands them to the flusher thread (flusher.h),
// which applies each to its slot in one transaction and commits; Poll() (or any wait)
// retires a finished flush on the loop. What was accepted before a flush that completed
// survives kill -9. A flush that fails is folded back under the newer writes and retried
// by the next one. While a flush is applying to a slot, the loop does not touch that
// slot's file: a read, reset, release or exact overflow check of it first waits for the
// flush (counted in RingStats::loop_wait_micros). Reads merge file + memtable exactly.
//
// Not thread-safe: one event loop owns the ring; the flusher is its only helper.
#pragma once

#include <array>
#include <deque>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "realtime/batch.h"
#include "realtime/closed_days.h"
#include "realtime/file_syncer.h"
#include "realtime/flusher.h"
#include "realtime/memtable.h"
#include "realtime/merged_cursor.h"
#include "realtime/slot.h"

namespace clickatron::realtime {

// Why a write was refused, with the HTTP status and status_txt it maps to.
enum class Refusal {
  kNone,
  kInvalid,      // 400 INVALID_LINE
  kOverflow,     // 400 COUNTER_OVERFLOW
  kNotReleased,  // 503 SLOT_NOT_RELEASED
  kExpired,      // 409 DAY_EXPIRED
  kClosed,       // 409 DAY_CLOSED: the day is closed (POST /close), late data
  kNotClosed,    // 409 DAY_NOT_CLOSED: /release of a day that is still open
  kStorage,      // 500 STORAGE_ERROR
  kBehind,       // 503 FLUSH_BEHIND: the memtables are full, Tokyo Cabinet is behind
};
int RefusalHttpCode(Refusal r);
std::string_view RefusalStatusText(Refusal r);

struct WriteOutcome {
  Refusal refusal = Refusal::kNone;
  std::string message;  // names the problem when refused
  uint64_t applied = 0;    // lines applied
  uint64_t duplicate = 0;  // lines skipped: their slot had seq already
  bool ok() const { return refusal == Refusal::kNone; }
};

struct RingStats {
  uint64_t syncs = 0;               // flushes retired (commits of one or more slots)
  uint64_t sync_micros_total = 0;   // flush time on the flusher thread: apply + commit
  uint64_t sync_micros_max = 0;
  uint64_t durable_lag_micros_max = 0;  // oldest write of a flush → flush retired
  uint64_t loop_waits = 0;              // times the loop waited for a running flush
  uint64_t loop_wait_micros_total = 0;
  uint64_t loop_wait_micros_max = 0;
  uint64_t refused_behind = 0;
  uint64_t resets = 0;
  uint64_t storage_errors = 0;
  uint64_t flush_errors = 0;
};

// Pending (not yet flushed) bytes beyond which /incr and /set are refused with 503
// FLUSH_BEHIND (docs/realtime.md: about 100 bytes per pending key).
inline constexpr size_t kDefaultMaxPendingBytes = size_t{512} << 20;

class Ring {
 public:
  // Opens (creating) DIR/slot-0.tcb, slot-1.tcb, slot-2.tcb, reads DIR/closed-days
  // (closed_days.h; a malformed one is an error naming it) and DIR/ring-id (ring_id.h,
  // created when missing). REQUIRES: dir exists.
  static Result<std::unique_ptr<Ring>> Open(const std::string& dir, const SlotOptions& options,
                                            size_t max_pending_bytes = kDefaultMaxPendingBytes);
  // Flushes everything (Sync()) and closes.
  ~Ring();

  // Accepts an /incr batch from `source` numbered `seq` (`lines` is not reordered).
  WriteOutcome Incr(std::vector<IncrLine>* lines, std::string_view source, int64_t seq);
  // Stores lookup records in day's slot (same state machine; overwrites).
  WriteOutcome SetLookups(int64_t day, const std::vector<LookupLine>& lines);
  // Closes every open day <= day (docs/realtime.md#day-lifecycle). Flush-then-act: each
  // such slot's pending writes (a running flush included) are applied and committed, its
  // state becomes closed, committed and fsynced; then the marks of every day <= day that a
  // slot holds are kept in closed-days with closed_through = max(W, day), written with
  // WriteFileAtomic. Nothing accepted afterwards can land in a closed slot (the state
  // machine refuses it). Idempotent. *closed_now: slots closed by this call. Refusal kNone
  // or kStorage (then W is unchanged; slots already closed stay closed).
  WriteOutcome CloseDay(int64_t day, int* closed_now);
  // Releases a closed day: the slot's pending writes are applied and committed, then the
  // day is marked released and committed. Refusal kNone, kInvalid when no slot holds day
  // (the server answers 404), kNotClosed when the day is open, or kStorage.
  WriteOutcome Release(int64_t day);
  // The closed-through watermark W (kNoDay when nothing was ever closed).
  int64_t closed_through() const { return closed_.through; }
  // This data directory's ring id (ring_id.h).
  const std::string& ring_id() const { return ring_id_; }
  // The newest day a slot holds (kNoDay when every slot is empty).
  int64_t newest_day() const;
  // Source's accepted mark in day: the slot's (pending included) if a slot holds day, else
  // the one kept when day was closed; -1 when none.
  int64_t SourceMark(int64_t day, std::string_view source) const;

  // Appends key's value to *out; false when absent. A counter is looked up only in the
  // slot of its day, if that slot holds that day; a lookup in every slot, newest day first.
  bool Get(std::string_view key, std::string* out);
  // Appends `key,value\n` for every record whose key starts with prefix and sorts after
  // `after` (all of them when after is empty), in key order, merged over the slots that hold
  // a day (a lookup present in several appears once, the newest day's value). At most limit
  // lines; returns how many were written. *more says whether records were left out by the
  // limit: the next page starts after the last key written.
  uint64_t Fwmatch(std::string_view prefix, std::string_view after, uint64_t limit, std::string* out,
                   bool* more);
  // The records Fwmatch would list (subtotal keys `{prefix}{subkey}.{ymdh}`), summed per
  // subkey over the hours from <= ymdh <= to (YMDH tokens): `subkey,sum\n` lines in subkey
  // order, sums that are 0 left out, exact in 128 bits. At most limit records are
  // read (others under the prefix, of another shape, are passed over); *more as Fwmatch's,
  // and *last the last key read, after which the next page starts. Returns records read.
  // A subkey whose sum leaves 128 bits is named in *overflow (empty when none): the answer
  // is then an error, never a wrong number.
  uint64_t Fwsum(std::string_view prefix, std::string_view from, std::string_view to, std::string_view after,
                 uint64_t limit, std::string* out, bool* more, std::string* last, std::string* overflow);
  // A cursor over the slot holding day (file + memtable), or nullptr if no slot holds it.
  // Valid until the next write to the ring or the next flush started (BeginFlush).
  std::unique_ptr<MergedCursor> Cursor(int64_t day);
  // Records of slot i, pending ones included (waits for a flush of that slot).
  uint64_t Records(int i);

  // The slot holding day, or nullptr.
  const Slot* SlotHolding(int64_t day) const;
  const Slot& slot(int i) const { return *slots_[static_cast<size_t>(i)]; }
  // Source's accepted high-water mark in slot i (pending included), or -1; all of them.
  int64_t Mark(int i, std::string_view source) const;
  const MemTable::Marks& marks(int i) const { return state_[static_cast<size_t>(i)].marks; }
  // Bytes held by memtables (pending and in flight).
  size_t pending_bytes() const;

  // Group commit, asynchronous. BeginFlush freezes every slot's memtable and starts the
  // flusher on them; false (nothing started) when nothing is pending or a flush is still
  // running. Each flush gets the next generation number.
  bool BeginFlush();
  bool flushing() const { return in_flight_; }
  // Retires a finished flush (the flusher's notify fd fired, or any time); true if one was.
  bool Poll();
  uint64_t started_generation() const { return started_generation_; }
  // Every flush up to this generation is committed (a failed one is covered by a later one).
  // A commit survives kill -9, not power loss: see DurableGeneration().
  uint64_t committed_generation() const { return committed_generation_; }
  // Every flush up to this generation is committed and on the device: with the FileSyncer,
  // only once the fsyncs requested after its commit have finished (docs/realtime.md#durability).
  // Without it (inline fsync, or none) the same as committed_generation().
  uint64_t DurableGeneration();
  // The FileSyncer's rounds: requested so far, and synced (0 and 0 without it). Writes
  // committed outside a flush (release, a slot flushed for a read) are on the device once
  // fsync_synced_round() reaches the fsync_requested_round() read after them.
  uint64_t fsync_requested_round() const { return syncer_ ? syncer_->requested_round() : 0; }
  uint64_t fsync_synced_round() const { return syncer_ ? syncer_->synced_round() : 0; }
  // The flusher's eventfd (readable when a flush finished) and its drain.
  int flush_notify_fd() const { return flusher_->notify_fd(); }
  void DrainFlushNotify() { flusher_->DrainNotify(); }
  // The FileSyncer's eventfd (readable when a round of fsyncs finished; -1 without it).
  int fsync_notify_fd() const { return syncer_ ? syncer_->notify_fd() : -1; }
  void DrainFsyncNotify() { if (syncer_) syncer_->DrainNotify(); }

  // Group commit, synchronous: waits for a running flush, flushes everything pending and
  // waits for it and for its fsyncs (inline, or the FileSyncer's when background_fsync).
  // Returns the first error.
  Status Sync();
  // Sync() then closes every slot; with background_fsync, waits for the last fsyncs.
  Status Close();

  const RingStats& stats() const { return stats_; }
  // fsyncs done by the FileSyncer (all zero without background_fsync).
  FileSyncerStats fsync_stats() const { return syncer_ ? syncer_->stats() : FileSyncerStats(); }

 private:
  Ring() = default;
  // Calls visit(key, cursor) for each record Fwmatch would list, at most limit; the
  // shared walk of Fwmatch and Fwsum (merged over the live slots, newest day on a tie).
  // When the limit cuts the walk, *last (if given) is the last key visited.
  template <typename Visit>
  uint64_t WalkPrefix(std::string_view prefix, std::string_view after, uint64_t limit, bool* more,
                      std::string* last, Visit visit);
  std::string ClosedDaysPath() const { return dir_ + "/" + kClosedDaysFile; }
  // Runs the state machine for the days of a write; on success the slots are ready.
  WriteOutcome AdmitDays(const int64_t* days, size_t count);
  WriteOutcome StorageError(const Status& s);
  // Adds a batch's lines of slot s to its memtable. With `exact`, each counter's stored
  // value is read from the file (no flush may be running); otherwise the bounds decide and
  // *need_exact is set (nothing changed) when they cannot.
  WriteOutcome AcceptLines(int s, const std::vector<IncrLine>& lines, bool exact, bool* need_exact);
  void UndoAccepted();
  // Waits for a running flush (all slots) and retires it; WaitFor only if it covers slot i.
  void WaitIdle();
  void WaitFor(int i);
  void Retire();
  // Applies slot i's memtable on the loop, synchronously. REQUIRES: no flush running.
  Status FlushSlotNow(int i);

  struct SlotWork {
    MemTable active;                   // accepted since the last freeze
    std::unique_ptr<MemTable> frozen;  // in flight on the flusher
    Status result;                     // the flusher's, for frozen
    MemTable::Marks marks;             // accepted marks: the file's and every table's
    Uint128 abs_max = 0;               // slot's abs_max() when no flush runs on it
  };
  std::string dir_;
  ClosedDays closed_;  // as in DIR/closed-days
  std::string ring_id_;  // DIR/ring-id
  std::array<std::unique_ptr<Slot>, kRingSlots> slots_;
  std::array<SlotWork, kRingSlots> state_;
  size_t max_pending_bytes_ = kDefaultMaxPendingBytes;
  std::unique_ptr<FileSyncer> syncer_;  // with options.fsync && options.background_fsync
  std::unique_ptr<Flusher> flusher_;
  bool in_flight_ = false;
  uint64_t started_generation_ = 0, committed_generation_ = 0, durable_generation_ = 0;
  // Written by the flusher while a flush runs, read by the loop after Retire(): the
  // FileSyncer round that covers the running flush's files.
  uint64_t flush_fsync_round_ = 0;
  struct AwaitingFsync {
    uint64_t generation;
    uint64_t round;
  };
  std::deque<AwaitingFsync> awaiting_fsync_;  // committed flushes whose fsyncs are not done
  int64_t flush_started_us_ = 0, oldest_write_us_ = -1, frozen_oldest_write_us_ = -1;
  struct Accepted {
    int slot;
    std::string_view key;
    int64_t delta;
    bool created;
  };
  std::vector<Accepted> accepted_;  // lines of the batch being accepted; reused
  RingStats stats_;
};

}  // namespace clickatron::realtime
