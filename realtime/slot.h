// Slot: one Tokyo Cabinet B+tree database of the day ring, holding one day's records.
//
// Records are the realtime records of docs/formats.md#realtime-records: counters (total and subtotal keys) stored
// as 8-byte little-endian int64 values, or 16-byte little-endian int128 values once a value
// leaves int64 (docs/realtime.md#storage: files of 8-byte values stay valid), and lookup
// records (`_l|hash`) stored as their escaped text. Beside them the slot keeps its own metadata under keys that start with
// '#', which no realtime key can (they start with [A-Za-z0-9] or `_l|`) and which sort
// before every record:
//
//   #day        the day this slot holds, decimal days since 1970-01-01 UTC
//   #state      "open", "closed" or "released" (day_state.h)
//   #hwm|<src>  the highest /incr seq of source <src> applied to this slot
//
// Metadata is invisible to reads, cursors and record counts.
//
// Durability is group commit. Writes go into one Tokyo Cabinet transaction that stays
// open until Commit() (the server commits every --sync-interval and on shutdown); with
// `fsync` set the commit is followed by tcbdbsync (msync + fsync of the file). A batch's lines and its high-water mark are always in the
// same transaction, so after kill -9 Tokyo Cabinet's write-ahead log rolls the file back
// to the last commit and every batch is either wholly there (mark included) or wholly
// absent: exactly once, whatever the sender re-sends.
//
// Reset (a released slot taken over by a new day) builds a fresh database beside the old
// one (`<path>.new`), syncs it and renames it over the old file: a crash at any moment
// leaves either the old released day or the new empty day, never a mix.
//
// Apply() writes a frozen memtable (memtable.h) in one transaction of its own: that is
// how the ring writes counters, lookups and marks, on the flusher thread (flusher.h).
//
// Not thread-safe. The ring's event loop owns the slot, except that Apply() runs on the
// flusher thread while the loop leaves the slot alone (it may still read day(), state()
// and path(), which Apply never changes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <tcbdb.h>  // TCBDB and BDBCUR are typedefs of unnamed structs: no forward declaration

#include "base/int128.h"
#include "base/status.h"
#include "realtime/day_state.h"
#include "realtime/memtable.h"


namespace clickatron::realtime {

inline constexpr char kMetaPrefix = '#';

struct SlotOptions {
  int32_t lmemb = 128;         // records per leaf page (fixed when a file is created)
  int32_t nmemb = 256;         // children per non-leaf page (ditto)
  int32_t leaf_cache = 32768;  // leaf pages kept in memory
  int32_t node_cache = 4096;   // non-leaf pages kept in memory
  int64_t mmap_bytes = 0;      // Tokyo Cabinet's extra mapped memory (xmsiz); 0 = off
  bool fsync = true;           // fsync once after every commit (tcbdbsync)
  // With fsync: leave the fsync to the Ring's FileSyncer thread instead of doing it inside
  // Commit() (see file_syncer.h). Only the Ring reads this.
  bool background_fsync = false;
  // Tokyo Cabinet's own synchronous transactions (BDBOTSYNC): the write-ahead log is
  // fsynced before every page it protects is overwritten, so even a power loss during a
  // commit cannot tear the file. Costs ~75 fsyncs per commit (measured: 257 ms per commit
  // on this machine against ~15 ms for commit + one sync), so it is off by default; kill -9
  // needs only the commit, which is atomic through the log whatever the OS still caches.
  bool power_safe = false;
};

class Slot {
 public:
  // Opens the database at path, creating an empty slot if it does not exist, rolling back
  // an interrupted transaction and removing a leftover `<path>.new` of an interrupted reset.
  static Result<std::unique_ptr<Slot>> Open(int index, std::string path, const SlotOptions& options);
  // Commits pending writes and closes (errors go to stderr; call Close() to see them).
  ~Slot();
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  // Commits and closes; afterwards every operation fails. Idempotent.
  Status Close();

  int index() const { return index_; }
  const std::string& path() const { return path_; }
  int64_t day() const { return day_; }  // kNoDay when empty
  SlotState state() const { return state_; }

  // Wipes the slot and opens it for `day` (state open, no records, no marks), crash-safe
  // as described above. Pending writes are committed first.
  Status Reset(int64_t day);
  // Marks the held day closed and commits at once; idempotent, and a no-op on a released
  // day. REQUIRES: state() != kEmpty. (The fsync is the caller's: the ring waits for it.)
  Status MarkClosed();
  // Marks the held day released and commits at once. REQUIRES: state() is kClosed or
  // kReleased (the ring refuses to release an open day).
  Status Release();

  // Adds delta to the counter `key` (created at delta if absent). If the sum would leave
  // 128 bits, nothing changes and *overflow is set (the call still returns OK).
  Status Add(std::string_view key, int64_t delta, bool* overflow);
  // Undoes an Add(key, delta) that succeeded; a counter back at 0 is removed, so a batch
  // refused after it leaves no trace.
  Status Undo(std::string_view key, int64_t delta);
  // Stores a lookup record (escaped value), replacing any previous value.
  Status PutLookup(std::string_view key, std::string_view escaped_value);
  // Records seq as source's high-water mark.
  Status SetMark(std::string_view source, int64_t seq);
  // Source's high-water mark as loaded at open (and moved by SetMark; Apply does not move
  // it: the ring keeps the marks it accepted), or -1 if it never wrote to this slot's day.
  int64_t Mark(std::string_view source) const;
  const std::map<std::string, int64_t, std::less<>>& marks() const { return marks_; }

  // Applies a frozen memtable in one transaction and commits it: every counter's delta
  // (sorted by key: neighbouring keys share leaves), every lookup, every mark (`#hwm|src`)
  // and the new `#absmax`; a counter sum that leaves 128 bits is an error. On error the
  // transaction is rolled back (the table is not applied at all). With options.fsync and
  // not background_fsync, tcbdbsync follows the commit. REQUIRES: no transaction pending.
  Status Apply(const MemTable& table);
  // An upper bound on |value| of every counter in the file (`#absmax`, kept by Apply; a
  // file without it is scanned at open). The ring's overflow check needs no read of the
  // file while stored + pending stays inside 128 bits by this much.
  Uint128 abs_max() const { return abs_max_; }
  // The counter's stored value; false when absent (or a lookup).
  bool ReadCounter(std::string_view key, Int128* value) const;
  // Whether a record (counter or lookup) exists under key.
  bool Has(std::string_view key) const;

  // Makes every write so far durable (commit, fsync with options.fsync). Cheap when
  // nothing is pending.
  Status Commit();
  // Drops every write since the last commit (after a storage error mid-batch) and reloads
  // the metadata from the file.
  Status Abort();
  bool pending() const { return in_transaction_; }

  // Appends the value of record `key` (counters in decimal, lookups as stored) to *out;
  // false if there is no such record. Metadata keys are never found.
  bool Get(std::string_view key, std::string* out) const;

  // Records (metadata excluded) and the database file's size in bytes.
  uint64_t records() const;
  uint64_t file_bytes() const;

  TCBDB* db() const { return db_; }

 private:
  Slot(int index, std::string path, const SlotOptions& options);
  Status OpenFile(const std::string& path, bool truncate);
  Status LoadMetadata();
  Status LoadAbsMax();
  Status Begin();
  // Writes #state and commits; state_ changes only once committed.
  Status SetState(SlotState state);
  Status Error(std::string_view what) const;
  void CloseFile();

  int index_;
  std::string path_;
  SlotOptions options_;
  TCBDB* db_ = nullptr;
  bool in_transaction_ = false;
  int64_t day_ = kNoDay;
  SlotState state_ = SlotState::kEmpty;
  std::map<std::string, int64_t, std::less<>> marks_;
  Uint128 abs_max_ = 0;
  std::string scratch_;  // metadata key being built; reused
};

// A counter's stored bytes (8 or 16, little-endian) as its value; false for any other size.
bool DecodeCounter(std::string_view stored, Int128* value);

// Appends a stored record value as text: counters decoded to decimal, lookups as stored.
void AppendRecordValue(std::string_view key, std::string_view stored, std::string* out);

// SlotCursor: walks a slot's records (metadata skipped) in key order.
//   SlotCursor c(slot);
//   for (c.Seek(prefix); c.Valid() && c.key().starts_with(prefix); c.Next()) ...
// Views from key()/value() are valid until the next call on the cursor or a write to
// the slot. A cursor must not live across a write (re-Seek after one).
class SlotCursor {
 public:
  explicit SlotCursor(const Slot& slot);
  ~SlotCursor();
  SlotCursor(const SlotCursor&) = delete;
  SlotCursor& operator=(const SlotCursor&) = delete;

  // Moves to the first record whose key is >= start.
  void Seek(std::string_view start);
  bool Valid() const { return valid_; }
  void Next();
  std::string_view key() const { return key_; }
  std::string_view stored_value() const { return value_; }  // raw bytes (DecodeCounter for counters)
  void AppendValue(std::string* out) const { AppendRecordValue(key_, stored_value(), out); }

 private:
  void Load();  // reads the current key, skipping metadata

  BDBCUR* cur_ = nullptr;
  TCXSTR* key_buf_ = nullptr;    // the current record, copied out of its leaf
  TCXSTR* value_buf_ = nullptr;
  bool valid_ = false;
  std::string_view key_, value_;
};

}  // namespace clickatron::realtime
