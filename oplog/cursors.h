// Cursors: how far each consumer (a realtime shard's delivery) has got through the log.
//
// A cursor is a name and the seq of the last record the consumer has been given and has
// acknowledged; the consumer resumes after it. All cursors of a log live in one file,
// DIR/cursors, one "name seq" line each, sorted by name. Saving writes the whole set to
// DIR/cursors.tmp, fsyncs it, renames it over DIR/cursors and fsyncs the directory, so a
// crash leaves either the old set or the new one, never a mix or a torn line.
//
// Names are 1..64 bytes of [A-Za-z0-9_.:-] (a shard index or its host:port both fit).
#ifndef CLICKATRON_OPLOG_CURSORS_H_
#define CLICKATRON_OPLOG_CURSORS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

using CursorMap = std::map<std::string, uint64_t, std::less<>>;

inline constexpr char kCursorsFile[] = "cursors";

// OK, or the error naming what is wrong with name.
Status CheckCursorName(std::string_view name);

// The cursors saved in dir; empty when none were ever saved.
Result<CursorMap> LoadCursors(const std::string& dir);

// Replaces the saved cursors of dir with cursors, atomically and durably.
Status SaveCursors(const std::string& dir, const CursorMap& cursors);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_CURSORS_H_
