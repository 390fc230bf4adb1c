// The realtime shard list an oplog's records were routed with, kept beside the oplog in
// DIR/realtime-shards (one host:port a line, in shard order).
//
// Every oplog record names the realtime shard of each of its lines (incr_payload.h),
// computed with the shard count of the moment. So the list may change only while nothing
// is waiting for delivery: resharding the realtime tier is done at a day boundary, after
// the API has drained (every realtime-K.slot-S cursor at the end of the log, /stats backlog 0)
// and before it is restarted with the new list. AdoptShardList enforces that at start:
//
//   no file, empty log            the list is written; a new cluster.
//   same list                     nothing to do.
//   different list, all delivered the new list is written and every shard's cursor set to
//                                 the end of the log (old records are not re-routed); the
//                                 cursors, rounds files and replay rules of shards past the new count are
//                                 removed, so they cannot hold back the oplog's retention.
//   different list, undelivered   refused, naming the old and new lists and the backlog.
//   no file, records in the log   refused: there is no telling how they were routed.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "net/host_port.h"

namespace clickatron {

namespace oplog {
class Oplog;
}

inline constexpr char kShardListFile[] = "realtime-shards";

// The saved list, or an empty list when there is no file.
Result<std::vector<std::string>> LoadShardList(const std::string& dir);
// Writes the list atomically and durably (temp file, fsync, rename, fsync of dir).
Status SaveShardList(const std::string& dir, const std::vector<std::string>& shards);

// See above. `cursor_name(k)` is the delivery cursor of shard k.
Status AdoptShardList(oplog::Oplog* log, const std::vector<net::HostPort>& shards);

}  // namespace clickatron
