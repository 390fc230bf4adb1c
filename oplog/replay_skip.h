// Replay skip: the lines a consumer drops from the records a replay makes it receive again
// (`clickatron-oplog replay --skip-through DAY`,
// docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host).
//
// A realtime shard rebuilt from the oplog must not get again the days the archive already
// holds: a re-sent line of such a day is refused by the shard once the day is closed there
// (late data, which the nightly adds to the archive a second time) or fills the new ring
// with a day the archive answers for anyway. The archive holds exactly the days <= its
// manifest's last_day of every record the lost shard had acknowledged, so a replay may
// name that day and the consumer drops, in the records up to the cursor it had before the
// replay, its lines of days <= it. Records after that cursor were never delivered, so
// nothing of them is in the archive: they go whole (a line of an archived day among them
// is late data, as it would have been).
//
// One file per consumer, DIR/replay-skip-<cursor>, one line, written atomically:
//
//   skip_through_day=2026-11-23 through_seq=48211\n
//
// The day is a UTC day (YYYY-MM-DD, the payload's days: api/incr_payload.h), the seq the
// last record the rule covers. A replay without --skip-through removes the file, so a rule
// never outlives the replay that made it.
#ifndef CLICKATRON_OPLOG_REPLAY_SKIP_H_
#define CLICKATRON_OPLOG_REPLAY_SKIP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

struct ReplaySkip {
  int64_t through_day = -1;   // days since 1970-01-01; -1: no rule
  uint64_t through_seq = 0;   // the rule covers records with seq <= this
  bool active() const { return through_day >= 0 && through_seq > 0; }
  // Whether a line of `day` in record `seq` is dropped.
  bool Drops(uint64_t seq, int64_t day) const { return seq <= through_seq && day <= through_day; }
};

// "replay-skip-<cursor>", a name in the oplog directory.
std::string ReplaySkipFileName(std::string_view cursor);

// The rule of consumer `cursor` in dir; an inactive one when there is no file. A file that
// does not parse is an error naming it and the line.
Result<ReplaySkip> LoadReplaySkip(const std::string& dir, std::string_view cursor);

// Writes the rule atomically and durably. REQUIRES: skip.active().
Status SaveReplaySkip(const std::string& dir, std::string_view cursor, const ReplaySkip& skip);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_REPLAY_SKIP_H_
