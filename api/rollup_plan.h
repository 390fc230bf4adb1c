// Rollup planning: which archive subtotal records a /breakdown reads (docs/api-read.md#rollups).
//
// Besides one subtotal record per hour, an archive whose files carry rollups
// (docs/formats.md#rollup-records) holds per subtotal namespace and key one record per UTC day and
// one per UTC month, summing the hours' `subkey:count` columns. Their time component is the
// first three characters of the hours' YMDH token (a day, `c41`) or the first two (a month,
// `c4`). A range of hours is read as month records for the whole UTC months inside it, day
// records for the whole UTC days left, and hour records at the edges — the same sums as the
// hours, from a handful of records instead of thousands.
//
// The archive total record is the index: a period is asked for only when the index lists an
// hour of it inside the range, and each rollup record asked for carries the index's hours
// of its period as its fallback. A rollup record the archive does not have (a file written
// before rollups, a rollup skipped for a key) is replaced by exactly those hour records, so
// a period is counted once: either its rollup or its hours, never both. So is a rollup whose
// mask of summed hours (keyformat/rollup_hours.h) is not valid or names an hour the index
// lacks — an hour whose total nets to 0 has no index column, so the hour path never reads
// its subtotal records, and a rollup that summed them would answer otherwise. Pure code.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "api/query_plan.h"
#include "base/status.h"
#include "keyformat/rollup_hours.h"

namespace clickatron {

inline constexpr size_t kDayTokenSize = 3;
inline constexpr size_t kMonthTokenSize = 2;

// The hours [start, end) a time token names: a YMDH hour (4 bytes), a UTC day (its first 3)
// or a UTC month (its first 2). Fails on another length or an impossible date.
Result<HourRange> PeriodOfToken(std::string_view token);

// One record to read: its time token (2, 3 or 4 bytes) and, for a rollup, the index's
// columns of its period (a slice of the total value: their hours are read instead when the
// archive lacks the rollup record) and those hours as a mask, taken on the planner's one
// pass over the index (a rollup's own mask must be inside it: RollupUsable). A slice, not a
// list of tokens: a 5-year key's whole months cover 43,800 hours, which a query should not
// copy.
struct PlannedRecord {
  std::string token;
  std::string_view fallback_columns;  // empty for an hour record
  RollupHours index_hours{};          // a rollup's: the hours of fallback_columns
  bool rollup() const { return token.size() < 4; }
};

// The hour tokens of a rollup record's fallback columns.
std::vector<std::string_view> FallbackHours(const PlannedRecord& record);

// The records of the index's hours inside `range` with a day <= w, in token order. With
// use_rollups false every record is an hour record (the hour-only plan). The plan holds
// views into total_value.
Status PlanSubtotalRecords(std::string_view total_value, HourRange range, int64_t w, bool use_rollups,
                           std::vector<PlannedRecord>* plan);

// The archive keys `{sub}.{ns}|{key}.{token}` of every record of a plan.
std::vector<std::string> PlannedKeys(const std::vector<PlannedRecord>& plan, std::string_view prefix);

// The hour keys to read because their rollup record was not among `found` (the time tokens
// of the records the archive answered).
std::vector<std::string> FallbackKeys(const std::vector<PlannedRecord>& plan,
                                      const std::unordered_set<std::string_view>& found,
                                      std::string_view prefix);

// Whether the archive's rollup record of a planned rollup may stand for its hours: its
// value's mask is valid and every hour it summed is among the record's index_hours (the
// index's hours of its period).
bool RollupUsable(const PlannedRecord& record, std::string_view value);

// Adds to *found the time tokens of the `{prefix}{token},value` lines of an archive body: an
// hour record's, and a rollup record's when RollupUsable for its record of the plan (a
// rollup not found this way is missing: its hours are read instead).
void CollectTokens(std::string_view body, std::string_view prefix, const std::vector<PlannedRecord>& plan,
                   std::unordered_set<std::string_view>* found);

}  // namespace clickatron
