// Buckets: how a query's hours roll up into its unit and time zone (docs/api-read.md#buckets-and-time-zones).
//
// Units: hour, day, week (starts Sunday 00:00), mweek (starts Monday 00:00), month (1st,
// 00:00), all in the query's zone. A query names the bucket holding `unit_reference_ts` and
// how many buckets back from it; that newest bucket counts hours up to and including the hour
// holding the reference time, so its `end` is that hour's end, not the unit's.
//
// Bucket edges are local civil times turned into UTC through the zone (timezone.h): a day
// bucket in America/New_York on 2012-03-11 runs 05:00–04:00 UTC and holds 23 hours. Hour
// buckets are UTC hours (with a whole-hour offset a local hour is a UTC hour). Data is kept
// per UTC hour, so every edge must be a whole UTC hour: an edge that is not (Asia/Kolkata's
// midnight is 18:30 UTC) is an error. Edges before 2000-01-01 (before any data can exist,
// ymdh.h) are not checked, so a long range may reach back into a zone's local mean time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "api/timezone.h"
#include "base/status.h"

namespace clickatron {

enum class Unit { kHour, kDay, kWeek, kMweek, kMonth };

inline constexpr int64_t kMaxBuckets = 10000;

// "hour" | "day" | "week" | "mweek" | "month".
Result<Unit> ParseUnit(std::string_view text);
std::string_view UnitName(Unit unit);

// One bucket: the UTC hours in [start, end), both whole hours.
struct Bucket {
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const Bucket&) const = default;
};

// The buckets ending with the one that holds ref_utc, newest first. Stops after max_count
// buckets, or after the bucket that holds stop_at (so for `units=-1` pass the first hour with
// data and a max_count of kMaxBuckets + 1: more than kMaxBuckets means too many).
// REQUIRES: max_count >= 1. Fails only when an edge is not a whole UTC hour; the message names
// the zone and the edge.
Result<std::vector<Bucket>> MakeBuckets(Unit unit, const TimeZone& tz, int64_t ref_utc,
                                        int64_t max_count, int64_t stop_at = INT64_MIN);

// The zone's offset at `utc` in whole hours (the `tz_offset` of an answer); fails when the
// offset there is not a whole number of hours.
Result<int> WholeHourOffsetAt(const TimeZone& tz, int64_t utc);

// Index of the bucket holding the UTC hour starting at `hour`, or -1 when it is in none.
// REQUIRES: buckets as MakeBuckets returns them (newest first, contiguous).
int FindBucket(const std::vector<Bucket>& buckets, int64_t hour);

}  // namespace clickatron
