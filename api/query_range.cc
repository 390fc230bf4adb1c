#include "api/query_range.h"

#include "keyformat/ymdh.h"

namespace clickatron {

namespace {

int64_t HourOf(int64_t ts) { return ts - ((ts % kSecondsPerHour) + kSecondsPerHour) % kSecondsPerHour; }

// The start of the whole bucket of unit in tz holding the UTC instant t; t itself when the
// bucket cannot be made (an edge not on a whole hour: such a bucket is never cut here).
int64_t UnitStartAt(Unit unit, const TimeZone& tz, int64_t t) {
  Result<std::vector<Bucket>> b = MakeBuckets(unit, tz, t, 1);
  return b.ok() ? b->front().start : t;
}

}  // namespace

Result<int64_t> RangeBucketCount(Unit unit, const TimeZone& tz, int64_t start, int64_t end) {
  Result<std::vector<Bucket>> b = MakeBuckets(unit, tz, end - 1, kMaxBuckets + 1, start);
  if (!b.ok()) return b.status();
  return static_cast<int64_t>(b->size());
}

void CutToRange(const QueryParams& q, std::vector<Bucket>* buckets) {
  if (!q.has_range || buckets->empty()) return;
  Bucket& oldest = buckets->back();
  const int64_t first_hour = HourOf(q.start);
  if (oldest.start < first_hour && first_hour < oldest.end) oldest.start = first_hour;
}

std::vector<int64_t> PartialBuckets(const QueryParams& q, const std::vector<Bucket>& buckets) {
  std::vector<int64_t> partial;
  if (!q.has_range || buckets.empty()) return partial;
  const Bucket& oldest = buckets.back();
  const Bucket& newest = buckets.front();
  if (UnitStartAt(q.unit, q.tz, oldest.start) != oldest.start) partial.push_back(oldest.start);
  // The newest ends at a unit's edge when the bucket holding its end begins there.
  if (UnitStartAt(q.unit, q.tz, newest.end) != newest.end &&
      (partial.empty() || partial.back() != newest.start)) {
    partial.push_back(newest.start);
  }
  return partial;
}

}  // namespace clickatron
