// Leaderboard arithmetic: a namespace's keys summed over a range (docs/api.md#api-leaderboard
// /leaderboard), and the JSON of the answer. Pure code — query_leaderboard.cc feeds it the
// backends' bodies.
//
// The archive lists a namespace's total records `{ns}|{key},{columns}` (one line a key); each
// key's sum over the range's hours of days <= W is its series' arithmetic (query_series.h,
// SeriesSum over one bucket). Those sums are written as `stored,sum` lines — the archive part
// of the answer, kept in the archive cache under the generation it was read from — and read
// back by BreakdownSum::AddRealtimeSums (the same `key,sum` lines a realtime /fwsum answers),
// beside realtime's `{ns}|{key}.{ymdh},n` lines (BreakdownSum::AddRealtime with prefix
// `{ns}|`, which counts only hours in range of days > W). Ranking, ties and lookups are a
// breakdown's (query_breakdown.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/query_breakdown.h"
#include "api/query_params.h"
#include "api/query_plan.h"
#include "base/int128.h"
#include "base/status.h"

namespace clickatron {

// A key of more than this many in either tier makes /leaderboard refuse the namespace (400
// NAMESPACE_TOO_LARGE) rather than answer from part of it.
inline constexpr size_t kMaxLeaderboardKeys = 10000;

// Appends `stored,sum\n` for every total record of an archive /fwmatch page of `{ns}|`: the
// sum of its columns over range's hours of days <= w (zero sums too: the line also says the
// key exists). *records gets the number of records read. Fails on a record that is not a
// total of ns, whose columns do not parse or whose sum leaves 128 bits.
Status AppendArchiveSums(std::string_view page, std::string_view ns, HourRange range, int64_t w,
                         std::string* sums, size_t* records);

// The `data` object of a /leaderboard answer: ns, unit, units, unit_reference_ts, tz_offset
// (start, end with the range form), limit, "total" (every key's sum over the range) and
// "leaderboard" ({"key", "value"}, largest first, ties by key as shown).
std::string LeaderboardJson(const QueryParams& q, Int128 total, const std::vector<BreakdownEntry>& entries);

}  // namespace clickatron
