#include "realtime/ring.h"

#include <algorithm>
#include <cstdio>

#include "base/latency.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"
#include "realtime/ring_id.h"
#include "wire/refusals.h"

namespace clickatron::realtime {

int RefusalHttpCode(Refusal r) {
  switch (r) {
    case Refusal::kNone: return 200;
    case Refusal::kInvalid: return 400;
    case Refusal::kOverflow: return 400;
    case Refusal::kNotReleased: return 503;
    case Refusal::kExpired: return 409;
    case Refusal::kClosed: return 409;
    case Refusal::kNotClosed: return 409;
    case Refusal::kStorage: return 500;
    case Refusal::kBehind: return 503;
  }
  return 500;
}

std::string_view RefusalStatusText(Refusal r) {
  switch (r) {
    case Refusal::kNone: return "OK";
    case Refusal::kInvalid: return wire::kInvalidLine;
    case Refusal::kOverflow: return wire::kCounterOverflow;
    case Refusal::kNotReleased: return wire::kSlotNotReleased;
    case Refusal::kExpired: return wire::kDayExpired;
    case Refusal::kClosed: return wire::kDayClosed;
    case Refusal::kNotClosed: return wire::kDayNotClosed;
    case Refusal::kStorage: return wire::kStorageError;
    case Refusal::kBehind: return wire::kFlushBehind;
  }
  return wire::kStorageError;
}

namespace {

WriteOutcome Refuse(Refusal r, std::string message) {
  WriteOutcome o;
  o.refusal = r;
  o.message = std::move(message);
  return o;
}

// Signed, so that -1 can mean "no write yet" beside the times.
int64_t NowMicros() { return static_cast<int64_t>(MonotonicMicros()); }

std::string Describe(const Slot& slot) {
  return "slot " + std::to_string(slot.index()) + " holds " + FormatDay(slot.day()) + " (" +
         std::string(SlotStateName(slot.state())) + ")";
}

}  // namespace

Result<std::unique_ptr<Ring>> Ring::Open(const std::string& dir, const SlotOptions& options,
                                         size_t max_pending_bytes) {
  std::unique_ptr<Ring> ring(new Ring());
  ring->max_pending_bytes_ = max_pending_bytes;
  ring->dir_ = dir;
  Result<ClosedDays> closed = LoadClosedDays(ring->ClosedDaysPath());
  if (!closed.ok()) return closed.status();
  ring->closed_ = std::move(closed).value();
  Result<std::string> ring_id = LoadOrCreateRingId(dir);
  if (!ring_id.ok()) return ring_id.status();
  ring->ring_id_ = std::move(ring_id).value();
  if (options.fsync && options.background_fsync && !options.power_safe) {
    ring->syncer_ = std::make_unique<FileSyncer>();
  }
  for (int i = 0; i < kRingSlots; ++i) {
    Result<std::unique_ptr<Slot>> slot =
        Slot::Open(i, dir + "/slot-" + std::to_string(i) + ".tcb", options);
    if (!slot.ok()) return slot.status();
    ring->slots_[static_cast<size_t>(i)] = std::move(slot).value();
    SlotWork& w = ring->state_[static_cast<size_t>(i)];
    for (const auto& [source, seq] : ring->slots_[static_cast<size_t>(i)]->marks()) w.marks.emplace(source, seq);
    w.abs_max = ring->slots_[static_cast<size_t>(i)]->abs_max();
  }
  ring->flusher_ = std::make_unique<Flusher>();
  return ring;
}

Ring::~Ring() {
  Status s = Close();
  if (!s.ok()) std::fprintf(stderr, "realtime: closing the ring: %s\n", s.message().c_str());
}

// days[i] is the day wanted in slot i, or kNoDay. Refusals are checked for every slot
// before any slot is reset, so a refused write changes nothing; the retryable refusal
// (not released) is told first, then the final ones.
WriteOutcome Ring::AdmitDays(const int64_t* days, size_t count) {
  int64_t newest = newest_day();
  for (size_t i = 0; i < count; ++i) newest = std::max(newest, days[i]);
  DayAction action[kRingSlots];
  for (size_t i = 0; i < count; ++i) {
    action[i] = days[i] == kNoDay ? DayAction::kApply
                                  : DecideDay(slots_[i]->day(), slots_[i]->state(), days[i], closed_.through, newest);
  }
  for (size_t i = 0; i < count; ++i) {
    if (action[i] == DayAction::kNotReleased) {
      return Refuse(Refusal::kNotReleased, "cannot take " + FormatDay(days[i]) + ": " + Describe(*slots_[i]) +
                                               ", not released yet");
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (action[i] != DayAction::kClosed) continue;
    const Slot& s = *slots_[i];
    return Refuse(Refusal::kClosed, "day " + FormatDay(days[i]) + " is closed: " +
                                        (s.day() == days[i] ? Describe(s)
                                                            : "the shard is closed through " + FormatDay(closed_.through)));
  }
  for (size_t i = 0; i < count; ++i) {
    if (action[i] != DayAction::kExpired) continue;
    const Slot& s = *slots_[i];
    return Refuse(Refusal::kExpired, "day " + FormatDay(days[i]) + " has expired: " +
                                         (s.day() > days[i] ? Describe(s)
                                                            : "the ring's newest day is " + FormatDay(newest)));
  }
  if (pending_bytes() > max_pending_bytes_) {
    ++stats_.refused_behind;
    return Refuse(Refusal::kBehind, "the shard holds " + std::to_string(pending_bytes() >> 20) +
                                        " MiB of writes not yet in Tokyo Cabinet (limit " +
                                        std::to_string(max_pending_bytes_ >> 20) + " MiB); retry shortly");
  }
  for (size_t i = 0; i < count; ++i) {
    if (days[i] == kNoDay) continue;
    Slot& s = *slots_[i];
    if (action[i] != DayAction::kReset) continue;
    std::fprintf(stderr, "realtime: slot %zu: %s → %s\n", i,
                 s.day() == kNoDay ? "empty" : (FormatDay(s.day()) + " released").c_str(),
                 FormatDay(days[i]).c_str());
    // Flush-then-act: the released day's late writes are committed before the file goes
    // (as they always were), and no flush is applying to the file being replaced.
    WaitIdle();
    Status st = FlushSlotNow(static_cast<int>(i));
    if (!st.ok()) return StorageError(st);
    st = s.Reset(days[i]);
    ++stats_.resets;
    // The file now holds the new day, or still the old one if the reset failed: either way
    // nothing is pending, and the file's marks are the accepted ones.
    SlotWork& w = state_[i];
    w.marks.clear();
    for (const auto& [source, seq] : s.marks()) w.marks.emplace(source, seq);
    w.abs_max = s.abs_max();
    if (!st.ok()) return StorageError(st);
  }
  return WriteOutcome();
}

WriteOutcome Ring::StorageError(const Status& s) {
  ++stats_.storage_errors;
  std::fprintf(stderr, "realtime: storage error: %s\n", s.message().c_str());
  return Refuse(Refusal::kStorage, s.message());
}

WriteOutcome Ring::Incr(std::vector<IncrLine>* lines, std::string_view source, int64_t seq) {
  int64_t want[kRingSlots];
  std::fill_n(want, kRingSlots, kNoDay);
  for (const IncrLine& l : *lines) {
    int64_t& w = want[SlotOfDay(l.day)];
    w = std::max(w, l.day);
  }
  // Two days that share a slot (d and d+3) cannot both be live: the older one has expired.
  for (const IncrLine& l : *lines) {
    const int64_t newer = want[SlotOfDay(l.day)];
    if (l.day != newer) {
      return Refuse(Refusal::kExpired, "line " + std::to_string(l.line) + ": day " + FormatDay(l.day) +
                                           " has expired: day " + FormatDay(newer) +
                                           " of the same batch takes its slot");
    }
  }
  // A day whose mark is already >= seq is a duplicate whatever its state (a batch re-sent
  // after its day was closed, released, even reused): it is not admitted.
  bool dup[kRingSlots];
  int64_t admit[kRingSlots];
  for (int s = 0; s < kRingSlots; ++s) {
    dup[s] = want[s] != kNoDay && SourceMark(want[s], source) >= seq;
    admit[s] = dup[s] ? kNoDay : want[s];
  }
  WriteOutcome out = AdmitDays(admit, kRingSlots);
  if (!out.ok()) return out;

  // Accept on the bounds alone (no file read); in the rare case they cannot decide (a
  // counter near ±2^63), undo, wait for any flush and accept again reading stored values.
  for (bool exact = false;; exact = true) {
    accepted_.clear();
    out = WriteOutcome();
    bool need_exact = false;
    for (int s = 0; s < kRingSlots && !need_exact; ++s) {
      if (want[s] == kNoDay) continue;
      if (dup[s]) {
        for (const IncrLine& l : *lines) out.duplicate += SlotOfDay(l.day) == s ? 1 : 0;
        continue;
      }
      WriteOutcome o = AcceptLines(s, *lines, exact, &need_exact);
      if (!o.ok()) {
        UndoAccepted();
        return o;
      }
      out.applied += o.applied;
    }
    if (!need_exact) break;
    UndoAccepted();
    WaitIdle();
  }
  for (int s = 0; s < kRingSlots; ++s) {
    if (want[s] == kNoDay || dup[s]) continue;
    SlotWork& w = state_[static_cast<size_t>(s)];
    w.active.SetMark(source, seq);
    auto it = w.marks.find(source);
    if (it == w.marks.end()) w.marks.emplace(std::string(source), seq); else it->second = seq;
  }
  if (out.applied > 0 && oldest_write_us_ < 0) oldest_write_us_ = NowMicros();
  return out;
}

WriteOutcome Ring::AcceptLines(int s, const std::vector<IncrLine>& lines, bool exact, bool* need_exact) {
  SlotWork& w = state_[static_cast<size_t>(s)];
  const Slot& slot = *slots_[static_cast<size_t>(s)];
  // |stored| <= w.abs_max and |frozen| <= its bound, so stored + frozen + pending fits
  // 128 bits whenever the sum of the bounds does (an overflowing sum of bounds: no fast path).
  Uint128 fixed = w.abs_max;
  const bool fixed_ok = !__builtin_add_overflow(fixed, w.frozen ? w.frozen->abs_bound() : 0, &fixed);
  WriteOutcome out;
  for (const IncrLine& l : lines) {
    if (SlotOfDay(l.day) != s) continue;
    bool created = false;
    PendingDelta* pending = w.active.AddCounter(l.key, &created);
    PendingDelta next = *pending;
    bool fits = AddInt128(&next, l.delta);  // the pending sum itself must fit too
    if (fits && !exact) {
      Uint128 bound;
      if (!fixed_ok || __builtin_add_overflow(fixed, AbsInt128(next), &bound) || bound > Uint128(kInt128Max)) {
        if (created) w.active.EraseCounter(l.key);
        *need_exact = true;
        return out;
      }
    } else if (fits) {
      Int128 value = 0;
      (void)slot.ReadCounter(l.key, &value);
      fits = AddInt128(&value, next);
    }
    if (!fits) {
      if (created) w.active.EraseCounter(l.key);
      return Refuse(Refusal::kOverflow, "line " + std::to_string(l.line) + ": counter '" + std::string(l.key) +
                                            "' would leave 128 bits adding " + std::to_string(l.delta));
    }
    *pending = next;
    w.active.NoteDelta(next);
    accepted_.push_back(Accepted{s, l.key, l.delta, created});
    ++out.applied;
  }
  return out;
}

// Undoes the lines accepted so far, newest first: counters this batch created go, the
// others get their deltas back.
void Ring::UndoAccepted() {
  for (auto it = accepted_.rbegin(); it != accepted_.rend(); ++it) {
    MemTable& t = state_[static_cast<size_t>(it->slot)].active;
    if (it->created) {
      t.EraseCounter(it->key);
    } else {
      bool created;
      *t.AddCounter(it->key, &created) -= it->delta;
    }
  }
  accepted_.clear();
}

WriteOutcome Ring::SetLookups(int64_t day, const std::vector<LookupLine>& lines) {
  int64_t want[kRingSlots];
  std::fill_n(want, kRingSlots, kNoDay);
  want[SlotOfDay(day)] = day;
  WriteOutcome out = AdmitDays(want, kRingSlots);
  if (!out.ok()) return out;
  MemTable& t = state_[static_cast<size_t>(SlotOfDay(day))].active;
  for (const LookupLine& l : lines) {
    t.PutLookup(l.key, l.value);
    ++out.applied;
  }
  if (out.applied > 0 && oldest_write_us_ < 0) oldest_write_us_ = NowMicros();
  return out;
}

WriteOutcome Ring::CloseDay(int64_t day, int* closed_now) {
  *closed_now = 0;
  ClosedDays next = closed_;
  WaitIdle();  // a running flush may hold writes of a day being closed
  for (int i = 0; i < kRingSlots; ++i) {
    Slot& s = *slots_[static_cast<size_t>(i)];
    if (s.state() == SlotState::kEmpty || s.day() > day) continue;
    if (s.state() == SlotState::kOpen) {
      Status st = FlushSlotNow(i);
      if (st.ok()) st = s.MarkClosed();
      if (!st.ok()) return StorageError(st);
      if (syncer_) syncer_->Request(s.path());
      ++*closed_now;
      std::fprintf(stderr, "realtime: slot %d: %s closed\n", i, FormatDay(s.day()).c_str());
    }
    next.Merge(s.day(), state_[static_cast<size_t>(i)].marks);
  }
  if (syncer_ && *closed_now > 0) {
    syncer_->Flush();
    if (syncer_->synced_round() < syncer_->requested_round()) {
      return StorageError(Status::Error("fsync failed; the closed state is not known to be on the device (see the log)"));
    }
  }
  next.through = std::max(next.through, day);
  next.Prune();
  if (next != closed_) {
    Status st = SaveClosedDays(ClosedDaysPath(), next);
    if (!st.ok()) return StorageError(st);
    closed_ = std::move(next);
  }
  return WriteOutcome();
}

WriteOutcome Ring::Release(int64_t day) {
  const int i = SlotOfDay(day);
  Slot* slot = slots_[static_cast<size_t>(i)].get();
  if (slot->day() != day) {
    return Refuse(Refusal::kInvalid, "no slot holds " + FormatDay(day) +
                                         (slot->day() == kNoDay ? std::string(": slot is empty")
                                                                : ": " + Describe(*slot)));
  }
  if (slot->state() == SlotState::kReleased) return WriteOutcome();
  if (slot->state() == SlotState::kOpen) {
    return Refuse(Refusal::kNotClosed, "day " + FormatDay(day) + " is open: close it first (POST /close?day=" +
                                           FormatDay(day) + ")");
  }
  if (closed_.through < day) {
    // Closed, but the shard stopped before closed-days recorded it: record it now, so the
    // day's marks outlive the slot.
    int closed_now = 0;
    WriteOutcome o = CloseDay(day, &closed_now);
    if (!o.ok()) return o;
  }
  WaitIdle();
  Status st = FlushSlotNow(i);
  if (st.ok()) st = slot->Release();
  if (st.ok() && syncer_) syncer_->Request(slot->path());
  if (!st.ok()) return StorageError(st);
  return WriteOutcome();
}

int64_t Ring::newest_day() const {
  int64_t newest = kNoDay;
  for (const auto& s : slots_) newest = std::max(newest, s->day());
  return newest;
}

int64_t Ring::SourceMark(int64_t day, std::string_view source) const {
  const int64_t kept = closed_.Mark(day, source);
  const Slot* held = SlotHolding(day);
  return held == nullptr ? kept : std::max(kept, Mark(held->index(), source));
}

Status Ring::FlushSlotNow(int i) {
  SlotWork& w = state_[static_cast<size_t>(i)];
  if (w.active.empty()) return Status::OK();
  Slot& slot = *slots_[static_cast<size_t>(i)];
  Status s = slot.Apply(w.active);
  if (!s.ok()) return s;
  if (syncer_) syncer_->Request(slot.path());
  w.active = MemTable();
  w.abs_max = slot.abs_max();
  return Status::OK();
}

size_t Ring::pending_bytes() const {
  size_t n = 0;
  for (const SlotWork& w : state_) n += w.active.bytes() + (w.frozen ? w.frozen->bytes() : 0);
  return n;
}

int64_t Ring::Mark(int i, std::string_view source) const {
  const MemTable::Marks& m = state_[static_cast<size_t>(i)].marks;
  auto it = m.find(source);
  return it == m.end() ? -1 : it->second;
}

bool Ring::BeginFlush() {
  if (in_flight_) return false;
  bool any = false;
  for (SlotWork& w : state_) {
    if (w.active.empty()) continue;
    w.frozen = std::make_unique<MemTable>(std::move(w.active));
    w.active = MemTable();
    w.result = Status::OK();
    any = true;
  }
  if (!any) {
    committed_generation_ = started_generation_;
    return false;
  }
  ++started_generation_;
  flush_fsync_round_ = 0;
  in_flight_ = true;
  flush_started_us_ = NowMicros();
  frozen_oldest_write_us_ = oldest_write_us_;
  oldest_write_us_ = -1;
  // The flusher touches only the frozen slots' files and results; the loop leaves them
  // alone until Retire().
  flusher_->Start([this] {
    for (int i = 0; i < kRingSlots; ++i) {
      SlotWork& w = state_[static_cast<size_t>(i)];
      if (!w.frozen) continue;
      w.result = slots_[static_cast<size_t>(i)]->Apply(*w.frozen);
      if (w.result.ok() && syncer_) {
        flush_fsync_round_ = std::max(flush_fsync_round_, syncer_->Request(slots_[static_cast<size_t>(i)]->path()));
      }
    }
  });
  return true;
}

bool Ring::Poll() {
  if (!in_flight_ || flusher_->Busy()) return false;
  Retire();
  return true;
}

void Ring::WaitIdle() {
  if (!in_flight_) return;
  const int64_t start = NowMicros();
  flusher_->Wait();
  const auto waited = static_cast<uint64_t>(NowMicros() - start);
  ++stats_.loop_waits;
  stats_.loop_wait_micros_total += waited;
  stats_.loop_wait_micros_max = std::max(stats_.loop_wait_micros_max, waited);
  Retire();
}

void Ring::WaitFor(int i) {
  if (in_flight_ && state_[static_cast<size_t>(i)].frozen) WaitIdle();
}

void Ring::Retire() {
  flusher_->Wait();  // already finished: orders the flusher's writes before our reads
  in_flight_ = false;
  const int64_t now = NowMicros();
  const auto micros = static_cast<uint64_t>(now - flush_started_us_);
  ++stats_.syncs;
  stats_.sync_micros_total += micros;
  stats_.sync_micros_max = std::max(stats_.sync_micros_max, micros);
  bool ok = true;
  for (int i = 0; i < kRingSlots; ++i) {
    SlotWork& w = state_[static_cast<size_t>(i)];
    if (!w.frozen) continue;
    if (w.result.ok()) {
      w.abs_max = slots_[static_cast<size_t>(i)]->abs_max();
    } else {
      // Nothing of it reached the file: keep it, under the newer writes, for the next flush.
      ok = false;
      ++stats_.flush_errors;
      std::fprintf(stderr, "realtime: flush of slot %d failed, will retry: %s\n", i, w.result.message().c_str());
      w.active.AbsorbOlder(w.frozen.get());
      if (oldest_write_us_ < 0 || frozen_oldest_write_us_ < oldest_write_us_) oldest_write_us_ = frozen_oldest_write_us_;
    }
    w.frozen.reset();
  }
  if (ok) {
    committed_generation_ = started_generation_;
    if (syncer_) awaiting_fsync_.push_back({started_generation_, flush_fsync_round_});
    if (frozen_oldest_write_us_ >= 0) {
      stats_.durable_lag_micros_max =
          std::max(stats_.durable_lag_micros_max, static_cast<uint64_t>(now - frozen_oldest_write_us_));
    }
  }
}

const Slot* Ring::SlotHolding(int64_t day) const {
  if (day < 0) return nullptr;
  const Slot* slot = slots_[static_cast<size_t>(SlotOfDay(day))].get();
  return slot->day() == day ? slot : nullptr;
}

bool Ring::Get(std::string_view key, std::string* out) {
  if (key.starts_with(kLookupPrefix)) {
    int order[kRingSlots];
    int n = 0;
    for (int i = 0; i < kRingSlots; ++i) {
      if (slots_[static_cast<size_t>(i)]->state() != SlotState::kEmpty) order[n++] = i;
    }
    for (int i = 1; i < n; ++i) {  // newest day first; three elements at most
      for (int j = i; j > 0 && slot(order[j]).day() > slot(order[j - 1]).day(); --j) std::swap(order[j], order[j - 1]);
    }
    for (int i = 0; i < n; ++i) {
      WaitFor(order[i]);
      if (const std::string* v = state_[static_cast<size_t>(order[i])].active.FindLookup(key)) {
        out->append(*v);
        return true;
      }
      if (slot(order[i]).Get(key, out)) return true;
    }
    return false;
  }
  Result<ParsedKey> parsed = ParseRealtimeKey(key);
  if (!parsed.ok()) return false;
  const Slot* held = SlotHolding(DayOfYmdhUnchecked(parsed->ymdh));
  if (held == nullptr) return false;
  WaitFor(held->index());
  const PendingDelta* pending = state_[static_cast<size_t>(held->index())].active.FindCounter(key);
  Int128 stored = 0;
  if (pending == nullptr) return held->Get(key, out);
  (void)held->ReadCounter(key, &stored);
  AppendInt128(out, stored + *pending);  // fits: checked at acceptance
  return true;
}

std::unique_ptr<MergedCursor> Ring::Cursor(int64_t day) {
  const Slot* held = SlotHolding(day);
  if (held == nullptr) return nullptr;
  WaitFor(held->index());
  return std::make_unique<MergedCursor>(*held, state_[static_cast<size_t>(held->index())].active);
}

uint64_t Ring::Records(int i) {
  WaitFor(i);
  const Slot& s = slot(i);
  const MemTable& t = state_[static_cast<size_t>(i)].active;
  uint64_t n = s.records();
  for (const auto& [key, delta] : t.counters()) n += s.Has(key) ? 0 : 1;
  for (const auto& [key, value] : t.lookups()) n += s.Has(key) ? 0 : 1;
  return n;
}

template <typename Visit>
uint64_t Ring::WalkPrefix(std::string_view prefix, std::string_view after, uint64_t limit, bool* more,
                          std::string* last, Visit visit) {
  // A page starts after `after` when that is inside the prefix's range, else at the prefix.
  const bool resume = !after.empty() && after >= prefix;
  std::unique_ptr<MergedCursor> cursors[kRingSlots];
  int64_t days[kRingSlots];
  int n = 0;
  for (int i = 0; i < kRingSlots; ++i) {
    const Slot& s = slot(i);
    if (s.state() == SlotState::kEmpty) continue;
    WaitFor(i);
    cursors[n] = std::make_unique<MergedCursor>(s, state_[static_cast<size_t>(i)].active);
    if (resume) {
      cursors[n]->Seek(after, prefix, /*after=*/true);
    } else {
      cursors[n]->Seek(prefix, prefix);
    }
    days[n] = s.day();
    ++n;
  }
  uint64_t visited = 0;
  while (visited < limit) {
    // The smallest key among the cursors still inside the prefix; on a tie (a lookup
    // record in several slots) the newest day's value wins.
    int best = -1;
    for (int i = 0; i < n; ++i) {
      MergedCursor& c = *cursors[i];
      if (!c.Valid() || !c.key().starts_with(prefix)) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      int cmp = c.key().compare(cursors[best]->key());
      if (cmp < 0 || (cmp == 0 && days[i] > days[best])) best = i;
    }
    if (best < 0) break;
    const std::string_view key = cursors[best]->key();
    // The key a page cut by the limit ends at: only the limit ends the walk with *more set.
    if (last != nullptr && visited + 1 == limit) last->assign(key);
    visit(key, *cursors[best]);
    ++visited;
    for (int i = 0; i < n; ++i) {
      if (i != best && cursors[i]->Valid() && cursors[i]->key() == key) cursors[i]->Next();
    }
    cursors[best]->Next();
  }
  *more = false;
  for (int i = 0; i < n && !*more; ++i) *more = cursors[i]->Valid() && cursors[i]->key().starts_with(prefix);
  return visited;
}

uint64_t Ring::Fwmatch(std::string_view prefix, std::string_view after, uint64_t limit, std::string* out,
                       bool* more) {
  return WalkPrefix(prefix, after, limit, more, nullptr, [out](std::string_view key, const MergedCursor& c) {
    out->append(key).push_back(',');
    c.AppendValue(out);
    out->push_back('\n');
  });
}

uint64_t Ring::Fwsum(std::string_view prefix, std::string_view from, std::string_view to, std::string_view after,
                     uint64_t limit, std::string* out, bool* more, std::string* last, std::string* overflow) {
  // Records come in key order, so one subkey's hours are consecutive: a running sum,
  // written when the subkey changes.
  std::string subkey;  // the subkey being summed (the cursor's key view moves on)
  Int128 sum = 0;
  bool summing = false, sum_ok = true;
  overflow->clear();
  auto flush = [&] {
    if (summing && !sum_ok && overflow->empty()) overflow->assign(subkey);
    if (summing && sum_ok && sum != 0) {
      out->append(subkey).push_back(',');
      AppendInt128(out, sum);
      out->push_back('\n');
    }
  };
  last->clear();
  const uint64_t visited = WalkPrefix(prefix, after, limit, more, last, [&](std::string_view key, const MergedCursor& c) {
    // {prefix}{subkey}.{ymdh}; tokens order as their hours (keyformat/ymdh.h).
    const std::string_view rest = key.substr(prefix.size());
    const size_t dot = rest.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || rest.size() - dot - 1 != kYmdhSize) return;
    const std::string_view ymdh = rest.substr(dot + 1);
    if (ymdh < from || ymdh > to) return;
    const std::string_view sk = rest.substr(0, dot);
    if (!summing || sk != subkey) {
      flush();
      subkey.assign(sk);
      sum = 0;
      summing = true;
      sum_ok = true;
    }
    sum_ok = sum_ok && AddInt128(&sum, c.Count());
  });
  flush();
  return visited;
}

uint64_t Ring::DurableGeneration() {
  if (!syncer_) return committed_generation_;
  const uint64_t synced = syncer_->synced_round();
  while (!awaiting_fsync_.empty() && awaiting_fsync_.front().round <= synced) {
    durable_generation_ = awaiting_fsync_.front().generation;
    awaiting_fsync_.pop_front();
  }
  // A flush that failed left no entry; the one that committed its writes did.
  if (awaiting_fsync_.empty()) durable_generation_ = committed_generation_;
  return durable_generation_;
}

Status Ring::Sync() {
  WaitIdle();
  if (BeginFlush()) {
    WaitIdle();
    if (committed_generation_ != started_generation_) {
      return Status::Error("flush failed; the writes stay pending (see the log)");
    }
  }
  if (syncer_) {
    syncer_->Flush();
    if (syncer_->synced_round() < syncer_->requested_round()) {
      return Status::Error("fsync failed; what was written since is not known to be on the device (see the log)");
    }
  }
  return Status::OK();
}

Status Ring::Close() {
  Status first;
  if (flusher_) first = Sync();
  flusher_.reset();
  for (auto& slot : slots_) {
    if (slot == nullptr) continue;
    Status s = slot->Close();
    if (!s.ok() && first.ok()) first = s;
    if (syncer_) syncer_->Request(slot->path());
  }
  for (auto& slot : slots_) slot.reset();
  if (syncer_) syncer_->Flush();
  return first;
}

}  // namespace clickatron::realtime
