// MemTable: one slot's writes that are acknowledged but not yet in Tokyo Cabinet.
//
// The event loop never waits for a Tokyo Cabinet commit (docs/realtime.md, "Memtable"):
// an accepted /incr batch lands here — per counter key the sum of its pending deltas, per
// source the highest seq accepted — and /set lookups with their newest value. Every sync
// interval the ring freezes the table and the flusher thread applies it to the slot in one
// transaction (marks included), sorted by key. Reads merge the slot's file with this table.
//
// A counter's pending delta is kept as a 128-bit sum: the counter's value (stored + pending)
// always fits 128 bits — the ring checks that at acceptance (docs/realtime.md#overflow-checked-at-acceptance). A key present here is a record once flushed, even when its sum is 0 (as a counter
// incremented by +1 then -1 stays a record at 0).
//
// Not thread-safe. While frozen and in flight, the table is only read (by the flusher and
// by the loop's acceptance checks): concurrent const access, no writes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/int128.h"

namespace clickatron::realtime {

using PendingDelta = Int128;

class MemTable {
 public:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using Counters = std::unordered_map<std::string, PendingDelta, Hash, std::equal_to<>>;
  using Lookups = std::unordered_map<std::string, std::string, Hash, std::equal_to<>>;
  using Marks = std::map<std::string, int64_t, std::less<>>;

  bool empty() const { return counters_.empty() && lookups_.empty() && marks_.empty(); }
  // Approximate heap bytes held (keys, values and per-entry overhead): the backpressure bound.
  size_t bytes() const { return bytes_; }

  // The pending delta of counter key, or nullptr.
  const PendingDelta* FindCounter(std::string_view key) const;
  // The counter's entry, created at 0 if absent (*created says which).
  PendingDelta* AddCounter(std::string_view key, bool* created);
  // Removes a counter entry (undoing one created by a refused batch).
  void EraseCounter(std::string_view key);
  // An upper bound on |delta| of every counter entry ever set here (the overflow fast path).
  Uint128 abs_bound() const { return abs_bound_; }
  void NoteDelta(PendingDelta d) { abs_bound_ = std::max(abs_bound_, AbsInt128(d)); }

  const std::string* FindLookup(std::string_view key) const;
  void PutLookup(std::string_view key, std::string_view escaped_value);

  // Source's highest accepted seq in this table, or -1.
  int64_t Mark(std::string_view source) const;
  void SetMark(std::string_view source, int64_t seq);

  const Counters& counters() const { return counters_; }
  const Lookups& lookups() const { return lookups_; }
  const Marks& marks() const { return marks_; }

  // Folds `older` (a frozen table whose flush failed) under this one: deltas add, this
  // table's lookups win, marks take the maximum. `older` is left empty.
  void AbsorbOlder(MemTable* older);

  // One entry of an ordered walk: a counter (lookup == nullptr) or a lookup record.
  struct Entry {
    std::string_view key;
    PendingDelta delta = 0;
    const std::string* lookup = nullptr;
  };
  // Appends to *out the (at most `limit`) smallest entries whose key is >= start, or > start
  // when `after`, and starts with prefix, in key order; returns whether more such entries
  // exist past the last one returned. Costs one pass over the table.
  bool Collect(std::string_view start, bool after, std::string_view prefix, size_t limit,
               std::vector<Entry>* out) const;
  // Every entry, in key order (what a flush applies).
  std::vector<Entry> Sorted() const;

 private:
  Counters counters_;
  Lookups lookups_;
  Marks marks_;
  size_t bytes_ = 0;
  Uint128 abs_bound_ = 0;
};

}  // namespace clickatron::realtime
