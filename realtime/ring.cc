#include "realtime/ring.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "keyformat/records.h"
#include "keyformat/ymdh.h"

namespace clickatron::realtime {

int RefusalHttpCode(Refusal r) {
  switch (r) {
    case Refusal::kNone: return 200;
    case Refusal::kInvalid: return 400;
    case Refusal::kOverflow: return 400;
    case Refusal::kNotReleased: return 503;
    case Refusal::kExpired: return 409;
    case Refusal::kStorage: return 500;
  }
  return 500;
}

std::string_view RefusalStatusText(Refusal r) {
  switch (r) {
    case Refusal::kNone: return "OK";
    case Refusal::kInvalid: return "INVALID_LINE";
    case Refusal::kOverflow: return "COUNTER_OVERFLOW";
    case Refusal::kNotReleased: return "SLOT_NOT_RELEASED";
    case Refusal::kExpired: return "DAY_EXPIRED";
    case Refusal::kStorage: return "STORAGE_ERROR";
  }
  return "STORAGE_ERROR";
}

namespace {

WriteOutcome Refuse(Refusal r, std::string message) {
  WriteOutcome o;
  o.refusal = r;
  o.message = std::move(message);
  return o;
}

std::string Describe(const Slot& slot) {
  return "slot " + std::to_string(slot.index()) + " holds " + FormatDay(slot.day()) + " (" +
         std::string(SlotStateName(slot.state())) + ")";
}

}  // namespace

Result<std::unique_ptr<Ring>> Ring::Open(const std::string& dir, const SlotOptions& options) {
  std::unique_ptr<Ring> ring(new Ring());
  if (options.fsync && options.background_fsync && !options.power_safe) {
    ring->syncer_ = std::make_unique<FileSyncer>();
  }
  for (int i = 0; i < kSlots; ++i) {
    Result<std::unique_ptr<Slot>> slot =
        Slot::Open(i, dir + "/slot-" + std::to_string(i) + ".tcb", options);
    if (!slot.ok()) return slot.status();
    ring->slots_[static_cast<size_t>(i)] = std::move(slot).value();
  }
  return ring;
}

// days[i] is the day wanted in slot i, or kNoDay. Refusals are checked for every slot
// before any slot is reset, so a refused write changes nothing.
WriteOutcome Ring::AdmitDays(const int64_t* days, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (days[i] == kNoDay) continue;
    const Slot& s = *slots_[i];
    if (DecideDay(s.day(), s.state(), days[i]) == DayAction::kNotReleased) {
      return Refuse(Refusal::kNotReleased, "cannot take " + FormatDay(days[i]) + ": " + Describe(s) +
                                               ", not released yet");
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (days[i] == kNoDay) continue;
    const Slot& s = *slots_[i];
    if (DecideDay(s.day(), s.state(), days[i]) == DayAction::kExpired) {
      return Refuse(Refusal::kExpired, "day " + FormatDay(days[i]) + " has expired: " + Describe(s));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (days[i] == kNoDay) continue;
    Slot& s = *slots_[i];
    if (DecideDay(s.day(), s.state(), days[i]) != DayAction::kReset) continue;
    std::fprintf(stderr, "realtime: slot %zu: %s → %s\n", i,
                 s.day() == kNoDay ? "empty" : (FormatDay(s.day()) + " released").c_str(),
                 FormatDay(days[i]).c_str());
    Status st = s.Reset(days[i]);
    ++stats_.resets;
    if (!st.ok()) return StorageError(st);
  }
  return WriteOutcome();
}

WriteOutcome Ring::StorageError(const Status& s) {
  ++stats_.storage_errors;
  std::fprintf(stderr, "realtime: storage error: %s; rolling back to the last sync\n", s.message().c_str());
  for (auto& slot : slots_) {
    Status a = slot->Abort();
    if (!a.ok()) std::fprintf(stderr, "realtime: %s\n", a.message().c_str());
  }
  return Refuse(Refusal::kStorage, s.message());
}

WriteOutcome Ring::Incr(std::vector<IncrLine>* lines, std::string_view source, int64_t seq) {
  int64_t want[kSlots] = {kNoDay, kNoDay, kNoDay};
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
  WriteOutcome out = AdmitDays(want, kSlots);
  if (!out.ok()) return out;

  // Sorted batches: neighbouring keys share B+tree leaves (see docs/benchmarks.md).
  std::sort(lines->begin(), lines->end(),
            [](const IncrLine& a, const IncrLine& b) { return a.key < b.key; });
  bool touched[kSlots] = {false, false, false};
  applied_.clear();
  for (int s = 0; s < kSlots; ++s) {
    if (want[s] == kNoDay) continue;
    Slot& slot = *slots_[static_cast<size_t>(s)];
    const bool duplicate = slot.Mark(source) >= seq;
    for (const IncrLine& l : *lines) {
      if (SlotOfDay(l.day) != s) continue;
      if (duplicate) {
        ++out.duplicate;
        continue;
      }
      bool overflow = false;
      Status st = slot.Add(l.key, l.delta, &overflow);
      if (!st.ok()) return StorageError(st);
      if (overflow) {
        // Undo what this batch already added, newest first, so every step retraces a
        // value the counter really had.
        for (auto it = applied_.rbegin(); it != applied_.rend(); ++it) {
          st = slots_[static_cast<size_t>(SlotOfDay(it->line->day))]->Undo(it->line->key, it->line->delta);
          if (!st.ok()) return StorageError(st);
        }
        return Refuse(Refusal::kOverflow, "line " + std::to_string(l.line) + ": counter '" +
                                              std::string(l.key) + "' would overflow int64 adding " +
                                              std::to_string(l.delta));
      }
      applied_.push_back(Applied{&l});
      ++out.applied;
    }
    touched[s] = !duplicate;
  }
  for (int s = 0; s < kSlots; ++s) {
    if (!touched[s]) continue;
    Status st = slots_[static_cast<size_t>(s)]->SetMark(source, seq);
    if (!st.ok()) return StorageError(st);
  }
  return out;
}

WriteOutcome Ring::SetLookups(int64_t day, const std::vector<LookupLine>& lines) {
  int64_t want[kSlots] = {kNoDay, kNoDay, kNoDay};
  want[SlotOfDay(day)] = day;
  WriteOutcome out = AdmitDays(want, kSlots);
  if (!out.ok()) return out;
  Slot& slot = *slots_[static_cast<size_t>(SlotOfDay(day))];
  for (const LookupLine& l : lines) {
    Status st = slot.PutLookup(l.key, l.value);
    if (!st.ok()) return StorageError(st);
    ++out.applied;
  }
  return out;
}

WriteOutcome Ring::Release(int64_t day) {
  Slot* slot = slots_[static_cast<size_t>(SlotOfDay(day))].get();
  if (slot->day() != day) {
    return Refuse(Refusal::kInvalid, "no slot holds " + FormatDay(day) +
                                         (slot->day() == kNoDay ? std::string(": slot is empty")
                                                                : ": " + Describe(*slot)));
  }
  Status st = slot->Release();
  if (!st.ok()) return StorageError(st);
  return WriteOutcome();
}

const Slot* Ring::SlotHolding(int64_t day) const {
  if (day < 0) return nullptr;
  const Slot* slot = slots_[static_cast<size_t>(SlotOfDay(day))].get();
  return slot->day() == day ? slot : nullptr;
}

bool Ring::Get(std::string_view key, std::string* out) const {
  if (key.starts_with(kLookupPrefix)) {
    const Slot* order[kSlots];
    int n = 0;
    for (const auto& s : slots_) {
      if (s->state() != SlotState::kEmpty) order[n++] = s.get();
    }
    for (int i = 1; i < n; ++i) {  // newest day first; three elements at most
      for (int j = i; j > 0 && order[j]->day() > order[j - 1]->day(); --j) std::swap(order[j], order[j - 1]);
    }
    for (int i = 0; i < n; ++i) {
      if (order[i]->Get(key, out)) return true;
    }
    return false;
  }
  Result<ParsedKey> parsed = ParseRealtimeKey(key);
  if (!parsed.ok()) return false;
  const Slot* slot = SlotHolding(DayOfYmdhUnchecked(parsed->ymdh));
  return slot != nullptr && slot->Get(key, out);
}

uint64_t Ring::Fwmatch(std::string_view prefix, uint64_t limit, std::string* out) const {
  std::unique_ptr<SlotCursor> cursors[kSlots];
  int64_t days[kSlots];
  int n = 0;
  for (const auto& s : slots_) {
    if (s->state() == SlotState::kEmpty) continue;
    cursors[n] = std::make_unique<SlotCursor>(*s);
    cursors[n]->Seek(prefix);
    days[n] = s->day();
    ++n;
  }
  uint64_t written = 0;
  while (written < limit) {
    // The smallest key among the cursors still inside the prefix; on a tie (a lookup
    // record in several slots) the newest day's value wins.
    int best = -1;
    for (int i = 0; i < n; ++i) {
      SlotCursor& c = *cursors[i];
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
    out->append(key).push_back(',');
    cursors[best]->AppendValue(out);
    out->push_back('\n');
    ++written;
    for (int i = 0; i < n; ++i) {
      if (i != best && cursors[i]->Valid() && cursors[i]->key() == key) cursors[i]->Next();
    }
    cursors[best]->Next();
  }
  return written;
}

Status Ring::Sync() {
  Status first;
  for (auto& slot : slots_) {
    if (!slot->pending()) continue;
    auto start = std::chrono::steady_clock::now();
    Status s = slot->Commit();
    auto micros = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - start).count());
    ++stats_.syncs;
    stats_.sync_micros_total += micros;
    stats_.sync_micros_max = std::max(stats_.sync_micros_max, micros);
    if (!s.ok()) {
      ++stats_.storage_errors;
      if (first.ok()) first = s;
    } else if (syncer_) {
      syncer_->Request(slot->path());
    }
  }
  return first;
}

Status Ring::Close() {
  Status first;
  for (auto& slot : slots_) {
    if (slot == nullptr) continue;
    Status s = slot->Close();
    if (!s.ok() && first.ok()) first = s;
    if (syncer_) syncer_->Request(slot->path());
  }
  if (syncer_) syncer_->Flush();
  return first;
}

}  // namespace clickatron::realtime
