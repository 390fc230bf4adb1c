// MergedCursor: walks what a slot holds — its file merged with its pending memtable — in key
// order, the way /fwmatch and /export must see it.
//
//   MergedCursor c(slot, pending);
//   for (c.Seek(prefix, prefix); c.Valid() && c.key().starts_with(prefix); c.Next()) ...
//
// A key in both is one record: a counter's value is the stored value plus the pending sum,
// a lookup takes the pending value. Pending entries are gathered a bounded batch at a time
// (one pass over the table per batch), so a walk over a big table stays linear-ish and a
// short /fwmatch does not sort a whole table. Same rules as SlotCursor: views are valid
// until the next call, and a cursor must not live across a write to the slot or the table
// (re-Seek after one). REQUIRES: no flush is applying to the slot meanwhile (ring.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "realtime/memtable.h"
#include "realtime/slot.h"

namespace clickatron::realtime {

class MergedCursor {
 public:
  MergedCursor(const Slot& slot, const MemTable& pending) : file_(slot), pending_(pending) {}
  MergedCursor(const MergedCursor&) = delete;
  MergedCursor& operator=(const MergedCursor&) = delete;

  // Moves to the first record whose key is >= start (> start when `after`). Pending entries
  // outside `prefix` are skipped (file records are not: the caller stops at the prefix).
  void Seek(std::string_view start, std::string_view prefix = {}, bool after = false);
  bool Valid() const { return from_file_ || from_pending_; }
  void Next();
  std::string_view key() const;
  void AppendValue(std::string* out) const;
  // The value of a counter record (file value plus pending sum). REQUIRES: not a lookup.
  Int128 Count() const;

 private:
  void Settle();       // picks the source(s) of the current record
  void FillPending();  // the next batch of pending entries after the last one

  SlotCursor file_;
  const MemTable& pending_;
  std::string prefix_;
  std::vector<MemTable::Entry> batch_;
  size_t at_ = 0;              // current entry in batch_
  bool more_pending_ = false;  // entries past batch_.back() exist
  std::string last_pending_;   // key of batch_.back(), for the next batch
  bool from_file_ = false;
  bool from_pending_ = false;
};

}  // namespace clickatron::realtime
