// LateStore: the day parts a realtime shard refused as closed or expired (409 DAY_CLOSED,
// 409 DAY_EXPIRED) — late data, kept durably in the oplog directory until the nightly has
// merged it into the archive (docs/api-write.md#late-data, docs/formats.md#late-store).
//
// One append-only file, DIR/late.log, of oplog frames (oplog/frame.h: length, seq,
// checksum, payload) so a torn append is told from damage exactly as in the oplog:
//
//   frame seq    payload
//   next id      late-state next_id=<N> released_through=<R> marks=<M>\n
//                <shard> <YYYY-MM-DD> <seq>\n  (M lines)        only as the FIRST frame
//   entry id     late-entry shard=<K> day=<YYYY-MM-DD> seq=<S> records=<R> lookups=<L> counters=<C>\n
//                <L lookup lines `_l|hash,escaped original\n`><C counter lines `key,delta\n`>
//
// An entry is one refused part: the realtime shard K, the day, the round seq S it was sent
// with, the oplog lines R it carries (before summing) and its lines as the sender sent
// them. Entry ids only grow, across restarts and releases (the state frame carries the next
// one). A new store's first id is the one Open is given: the API gives unix seconds << 20 of
// its creation, so that a store made anew at an address (a host replaced with its disk, an
// oplog directory started over) hands out ids above every id an earlier store there gave,
// and the nightly's mark for that address (the last id it merged, docs/formats.md#manifest)
// never hides the new store's entries. (At a million entries a second for every second a
// store lived, the next store's ids would catch up: not a rate late data reaches. The ids
// stay below 2^53, exact in JavaScript, until the year 2242.) The state frame is written only by ReleaseThrough, which rewrites
// the file without the released entries (copied to late.log.tmp, fdatasync'ed, renamed
// durably over late.log: a crash leaves the old file or the new one).
//
// Exactly once: the store keeps, per (shard, day), the highest round seq stored (the
// "mark"), also after the entries are released (the state frame carries the marks of the
// last kMarkDays days), and skips a part whose seq is <= it — the realtime shard's own
// rule, so a round re-sent after a crash or a rewind is stored once.
//
// Open cuts a torn tail (a bad last frame with no whole frame after it: an append the
// process did not finish) and says so in recovery(); a bad frame with a whole one after it
// is damage and Open refuses, naming the file and the offset. Memory: an index entry per
// pending entry (about 40 bytes) and the marks; the lines stay on disk.
//
// Not thread-safe (the API's event loop owns it). Append and ReleaseThrough block on the
// disk (fdatasync): late parts are rare and the release is the nightly's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace clickatron {

// One refused part, as the sender hands it over or a reader gets it back.
struct LatePart {
  uint32_t shard = 0;
  int64_t day = 0;              // days since 1970-01-01
  uint64_t seq = 0;             // the round seq it was sent with (>= 1)
  uint64_t records = 0;         // oplog lines it carries, before summing
  std::string_view lookups;     // `_l|hash,escaped\n` lines ("" or ending in '\n')
  std::string_view counters;    // `key,delta\n` lines ("" or ending in '\n')
};

struct LateEntry {
  uint64_t id = 0;
  LatePart part;                // views valid during the visit only
};

struct LateStoreStats {
  uint64_t entries = 0;         // pending (not released)
  uint64_t lines = 0;           // their lookup and counter lines
  uint64_t bytes = 0;           // the file's size
  int64_t oldest_pending_day = -1;  // -1 when nothing is pending
  uint64_t first_id = 0;        // of the oldest pending entry; 0 when none
  uint64_t last_id = 0;         // the last id given (a new store: its first id - 1)
  uint64_t released_through = 0;
  uint64_t appended = 0;        // parts stored by this process
  uint64_t duplicate_parts = 0; // parts skipped by this process: already stored
};

struct LateRelease {
  uint64_t released_entries = 0;
  uint64_t entries = 0;         // pending after the release
};

class LateStore {
 public:
  static constexpr char kFileName[] = "late.log";
  // Marks of days older than the newest day marked minus this many are dropped at a
  // rewrite: a part is re-sent only while its oplog records are past a saved cursor.
  static constexpr int64_t kMarkDays = 400;

  // Opens (creating) dir/late.log, recovering it; a new file starts its ids at first_id (its
  // state frame written before this returns). Errors name the file and the problem.
  static Result<std::unique_ptr<LateStore>> Open(const std::string& dir, uint64_t first_id = 1);
  ~LateStore();
  LateStore(const LateStore&) = delete;
  LateStore& operator=(const LateStore&) = delete;

  // What Open found: "" or what it did ("cut a torn tail of 17 bytes at offset 4096 (frame
  // cut short)").
  const std::string& recovery() const { return recovery_; }
  const std::string& path() const { return path_; }

  // Stores the part durably (written and fdatasync'ed before this returns) and returns its
  // id, or 0 when the part was already stored (seq <= the mark of its shard and day).
  // On an error nothing is stored and the caller retries later.
  // REQUIRES: part.seq >= 1, lookups and counters each "" or ending in '\n'.
  Result<uint64_t> Append(const LatePart& part);

  // Reads the entries with id > after in id order, calling visit for each: at least one,
  // then more while their payloads stay within max_bytes in all. Sets *more when entries
  // remain after the last one visited. An error of visit stops the read and is returned;
  // a frame that no longer reads back is an error naming the file and the entry.
  Status ReadAfter(uint64_t after, size_t max_bytes, const std::function<Status(const LateEntry&)>& visit,
                   bool* more) const;

  // Deletes the entries with id <= through by an atomic rewrite of the file (none to
  // delete: nothing is written). Marks and ids stay.
  Result<LateRelease> ReleaseThrough(uint64_t through);

  // The highest seq stored for (shard, day), 0 if none.
  uint64_t Mark(uint32_t shard, int64_t day) const;
  LateStoreStats Stats() const;

 private:
  struct Index {
    uint64_t id;
    uint64_t offset;            // of the frame in the file
    uint32_t frame_bytes;
    uint32_t lines;
    int64_t day;
  };

  LateStore(std::string dir, int fd);
  Status Recover();
  Status LoadFrame(uint64_t offset, uint64_t id, std::string_view payload, bool first);
  Status Rewrite(size_t drop, uint64_t through);
  void AddPending(const Index& index);

  const std::string dir_;
  const std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;           // bytes of whole frames; appends go here
  uint64_t next_id_ = 1;
  uint64_t released_through_ = 0;
  std::vector<Index> index_;    // pending entries, id order
  std::map<std::pair<uint32_t, int64_t>, uint64_t> marks_;
  std::map<int64_t, uint64_t> pending_days_;  // day -> pending entries
  uint64_t pending_lines_ = 0;
  uint64_t appended_ = 0, duplicate_parts_ = 0;
  std::string recovery_;
};

}  // namespace clickatron
