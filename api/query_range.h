// The range form of a query: `start` and `end` (unix seconds, end exclusive) instead of
// `units` and `unit_reference_ts` (docs/api-read.md#the-range-form).
//
// The buckets of a range are those of the query's unit and zone from the one holding start
// through the one holding end - 1, exactly as `units` buckets ending at unit_reference_ts =
// end - 1 would be (buckets.h): the newest counts hours up to and including the hour holding
// end - 1. The oldest is then cut to begin at the hour holding start, so the buckets hold
// exactly the hours of [start, end) — the range's total is the sum of its buckets, in every
// zone (zones run on whole-hour offsets at every edge, buckets.h). A bucket holding fewer
// hours than its unit — the oldest when start falls inside it, the newest when end does —
// is partial, and an answer of the range form lists the partial buckets' starts.
//
// Pure code over buckets.h; the parameters are parsed in query_params.h.
#pragma once

#include <cstdint>
#include <vector>

#include "api/buckets.h"
#include "api/query_params.h"
#include "base/status.h"

namespace clickatron {

// How many buckets of `unit` in `tz` hold the hours of [start, end): more than kMaxBuckets
// comes back as kMaxBuckets + 1. Fails when a bucket edge is not a whole UTC hour.
// REQUIRES: start < end, both within the YMDH range.
Result<int64_t> RangeBucketCount(Unit unit, const TimeZone& tz, int64_t start, int64_t end);

// With the range form, cuts the oldest of buckets (newest first, as MakeBuckets gives them
// for q) to begin at the hour holding q.start; otherwise leaves them as they are.
void CutToRange(const QueryParams& q, std::vector<Bucket>* buckets);

// The starts of the partial buckets of a range-form answer (none otherwise): the oldest when
// it begins after its unit's start, the newest when it ends before its unit's end. Oldest
// first; one entry when they are the same bucket.
std::vector<int64_t> PartialBuckets(const QueryParams& q, const std::vector<Bucket>& buckets);

}  // namespace clickatron
