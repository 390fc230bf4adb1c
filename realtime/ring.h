// Ring: the three slots of one realtime shard and the operations the HTTP layer needs —
// batched exactly-once increments, lookup records, reads, release and durability.
//
// Every write first runs the day state machine (day_state.h) for each day it touches and
// changes nothing if one of them is refused. An /incr batch is then applied slot by slot:
// lines of a slot whose high-water mark for the source is already >= seq are skipped as
// duplicates; the others are added (sorted by key first, for B+tree locality: see
// docs/benchmarks.md) and the mark moves to seq, all in the slot's open transaction. A
// counter that would overflow int64 undoes the whole batch (every slot) and refuses it.
//
// Sync() commits every slot: what was acknowledged before it survives kill -9. Not
// thread-safe: one event loop owns the ring.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "keyformat/status.h"
#include "realtime/batch.h"
#include "realtime/file_syncer.h"
#include "realtime/slot.h"

namespace clickatron::realtime {

// Why a write was refused, with the HTTP status and status_txt it maps to.
enum class Refusal {
  kNone,
  kInvalid,      // 400 INVALID_LINE
  kOverflow,     // 400 COUNTER_OVERFLOW
  kNotReleased,  // 503 SLOT_NOT_RELEASED
  kExpired,      // 409 DAY_EXPIRED
  kStorage,      // 500 STORAGE_ERROR
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
  uint64_t syncs = 0;
  uint64_t sync_micros_total = 0;
  uint64_t sync_micros_max = 0;
  uint64_t resets = 0;
  uint64_t storage_errors = 0;
};

class Ring {
 public:
  // Opens (creating) DIR/slot-0.tcb, slot-1.tcb, slot-2.tcb. REQUIRES: dir exists.
  static Result<std::unique_ptr<Ring>> Open(const std::string& dir, const SlotOptions& options);

  // Applies an /incr batch from `source` numbered `seq`. `lines` is reordered (sorted).
  WriteOutcome Incr(std::vector<IncrLine>* lines, std::string_view source, int64_t seq);
  // Stores lookup records in day's slot (same state machine; overwrites).
  WriteOutcome SetLookups(int64_t day, const std::vector<LookupLine>& lines);
  // Marks day released and commits. Refusal kNone, or kInvalid when no slot holds day
  // (the server answers 404), or kStorage.
  WriteOutcome Release(int64_t day);

  // Appends key's value to *out; false when absent. A counter is looked up only in the
  // slot of its day, if that slot holds that day; a lookup in every slot, newest day first.
  bool Get(std::string_view key, std::string* out) const;
  // Appends `key,value\n` for every record whose key starts with prefix, in key order,
  // merged over the slots that hold a day (a lookup present in several appears once, the
  // newest day's value). At most limit lines; returns how many were written.
  uint64_t Fwmatch(std::string_view prefix, uint64_t limit, std::string* out) const;

  // The slot holding day, or nullptr.
  const Slot* SlotHolding(int64_t day) const;
  const Slot& slot(int i) const { return *slots_[static_cast<size_t>(i)]; }

  // Commits every slot with pending writes (then fsyncs them: inline, or queued for the
  // FileSyncer thread when options.background_fsync).
  Status Sync();
  // Sync() then closes every slot; with background_fsync, waits for the last fsyncs.
  Status Close();

  const RingStats& stats() const { return stats_; }
  // fsyncs done by the FileSyncer (all zero without background_fsync).
  FileSyncerStats fsync_stats() const { return syncer_ ? syncer_->stats() : FileSyncerStats(); }

 private:
  Ring() = default;
  // Runs the state machine for the days of a write; on success the slots are ready.
  WriteOutcome AdmitDays(const int64_t* days, size_t count);
  WriteOutcome StorageError(const Status& s);

  std::array<std::unique_ptr<Slot>, kSlots> slots_;
  std::unique_ptr<FileSyncer> syncer_;  // with options.fsync && options.background_fsync
  struct Applied {
    const IncrLine* line;
  };
  std::vector<Applied> applied_;  // lines of the batch being applied; reused
  RingStats stats_;
};

}  // namespace clickatron::realtime
