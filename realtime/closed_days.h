// ClosedDays: what a realtime shard keeps of the days it closed, in the file `closed-days`
// beside its slots (docs/formats.md#realtime-closed-days):
//
//   # clickatron-realtime closed days (docs/formats.md#realtime-closed-days)
//   closed_through = 2012-03-25
//   mark = 2012-03-24 api-1 1182
//   mark = 2012-03-25 api-1 1530
//
// `closed_through` is the watermark W: every day <= W is closed for good (day_state.h).
// Each `mark = DAY SOURCE SEQ` is the high-water mark source SOURCE had in DAY when the day
// was closed, so that a batch re-sent after the day's slot was released and reused is still
// answered as a duplicate and not as late data. Marks are kept for the kClosedMarkDays days
// up to W; older ones are dropped when the file is written. The lines are `key = value`
// text (keyformat/key_value.h); marks sorted by day, then source, so the same content
// always makes the same bytes. The file is replaced with WriteFileAtomic: a crash leaves
// the old one or the new one.
//
// A file that does not parse is an error naming the path and the line (the shard refuses
// to start): closed_through missing, repeated or not a day, a mark that is not
// `YYYY-MM-DD SOURCE SEQ` or whose day is after closed_through, an unknown key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "realtime/day_state.h"

namespace clickatron::realtime {

inline constexpr char kClosedDaysFile[] = "closed-days";
// Days (up to W) whose closing marks are kept: a sender's oplog holds far less.
inline constexpr int64_t kClosedMarkDays = 400;

using SourceMarks = std::map<std::string, int64_t, std::less<>>;

struct ClosedDays {
  int64_t through = kNoDay;               // W; kNoDay when nothing was ever closed
  std::map<int64_t, SourceMarks> marks;   // day → source → seq

  // Source's mark in day, or -1.
  int64_t Mark(int64_t day, std::string_view source) const;
  // Raises each of day's marks to the ones given (keeps the higher).
  void Merge(int64_t day, const SourceMarks& source_marks);
  // Drops the marks of days <= through - kClosedMarkDays.
  void Prune();
  bool operator==(const ClosedDays&) const = default;
};

std::string FormatClosedDays(const ClosedDays& days);
// Errors name the line: "line 3: mark '2012-03-25 api-1' is not 'YYYY-MM-DD SOURCE SEQ'".
Result<ClosedDays> ParseClosedDays(std::string_view text);

// Reads path; a file that does not exist is ClosedDays{} (a new shard). Errors are
// prefixed with the path.
Result<ClosedDays> LoadClosedDays(const std::string& path);
// Writes path with WriteFileAtomic.
Status SaveClosedDays(const std::string& path, const ClosedDays& days);

}  // namespace clickatron::realtime
