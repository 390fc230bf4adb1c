// Replay: making one consumer receive records again (`clickatron-oplog replay`,
// docs/operations.md "Replaying an oplog after losing a realtime host").
//
// A consumer resumes after its cursor (cursors.h), so moving its cursor back makes it
// receive again every record after the new position: the way to refill a realtime shard
// that lost its data. RewindCursor does that to a log that no process has open. It opens
// the log with Oplog::Open, which takes DIR/LOCK: while a process (the API) has the log
// open the rewind is refused, because that process reads cursors only when it starts and
// would overwrite the change with its own position.
//
// Refused, changing nothing:
//   - the directory is in use (DIR/LOCK is held) or the log does not open (corruption);
//   - there is no cursor of that name, nor a group of that name (the message lists the
//     cursors there are);
//   - the log holds no records;
//   - `from` is before the oldest record the log still holds (retention deleted the older
//     ones) or after the last one;
//   - `from` is past the next record of a cursor: records never delivered would be skipped.
// Otherwise, in this order: the consumer's own files named in the request are removed (the
// API's delivery-rounds file, whose recorded batch ends would otherwise take precedence
// over the cursor) and the directory synced; the consumer's replay skip rule
// (replay_skip.h) is removed, or with skip_through_day written for the records up to its
// old cursor; then the cursor is set to from - 1 and saved atomically (cursors.h). A crash
// before the cursor is saved leaves the old cursor without those files, which the API
// handles by re-sending one record per batch (harmless; the rule covers only records the
// old cursor had passed, which that cursor does not send again).
//
// Opening the log recovers it exactly as the API would on its next start (a torn tail is
// cut); what was repaired is returned.
#ifndef CLICKATRON_OPLOG_REPLAY_H_
#define CLICKATRON_OPLOG_REPLAY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "oplog/cursors.h"
#include "oplog/replay_skip.h"

namespace clickatron::oplog {

struct RewindRequest {
  // The consumer, e.g. "realtime-1.slot-0"; or a group: when no cursor has this name, it
  // names every cursor "<cursor>.<anything>" (the API's three streams of realtime shard 1
  // are "realtime-1.slot-0..2": "realtime-1" names them all), rewound together or not at all.
  std::string cursor;
  uint64_t from = 0;                      // first record to receive again; 0 = the oldest kept
  // The consumer's own files to remove, names in the directory (no '/'), removed if present.
  std::function<std::vector<std::string>(const std::string& cursor)> consumer_files;
  // The last day the archive holds (days since 1970-01-01), or -1: lines of days <= it in
  // the records the consumer had already acknowledged are not sent again (replay_skip.h).
  int64_t skip_through_day = -1;
};

struct CursorRewind {
  std::string name;
  uint64_t old_cursor = 0;
  ReplaySkip skip;                   // the rule written (inactive: none)
  std::string skip_path;             // where it was written
};

struct Rewind {
  std::vector<CursorRewind> cursors;  // in name order
  uint64_t new_cursor = 0;  // from - 1
  uint64_t records = 0;     // records the consumer will receive again (seq >= from)
  uint64_t first_seq = 0;   // the first and last of them
  uint64_t last_seq = 0;
  std::vector<std::string> removed;  // paths of the files that existed and were removed
  std::string recovery;              // what opening the log repaired, "" if nothing
};

// The cursors `name` names in `cursors` (itself, or its group; see RewindRequest::cursor).
std::vector<std::string> CursorsNamed(const CursorMap& cursors, const std::string& name);

// See above. A missing dir is an error (it is never created here).
Result<Rewind> RewindCursor(const std::string& dir, const RewindRequest& request);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_REPLAY_H_
