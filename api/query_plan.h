// Query planning: which records a query needs from which tier, as pure functions.
//
// The archive watermark W (docs/architecture.md#the-watermark, 3.3) is the `X-Archive-Last-Day` of the archive answer a
// query used, as days since 1970-01-01; an answer without the header holds no days
// (kNoArchiveDays). An hour whose UTC day is <= W is read from the archive only, a later hour
// from realtime only. Realtime can hold only days after W up to tomorrow (increments later
// than tomorrow are refused), so those are the only realtime hours worth asking for.
//
// Backend requests are plain GETs; /mget batches are cut so every URL stays under the
// backends' request-line limit (net/ servers answer 414 beyond 8 KB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/buckets.h"
#include "base/status.h"

namespace clickatron {

inline constexpr int64_t kNoArchiveDays = -1;

// W from the header value (absent: kNoArchiveDays). A malformed header is an error.
Result<int64_t> ParseWatermark(std::optional<std::string_view> header);

// The UTC day of an hour (unix seconds).
inline int64_t DayOfHour(int64_t hour) {
  return hour >= 0 ? hour / 86400 : -((-hour + 86399) / 86400);
}

// The hours a query covers, [start, end), clamped to the hours data can have (ymdh.h);
// empty (start >= end) when none can.
struct HourRange {
  int64_t start = 0;
  int64_t end = 0;
  bool empty() const { return start >= end; }
  bool Contains(int64_t hour) const { return hour >= start && hour < end; }
};
HourRange RangeOfBuckets(const std::vector<Bucket>& buckets);

// The hours of `range` realtime may hold past watermark `w`: days > w and <= last_day, as
// RealtimeSpan gives them. Sets *hours to them (empty when there are none) and returns true,
// or returns false when there are more than max_hours — then one /fwmatch over the key is
// the cheaper question.
bool RealtimeHours(HourRange range, int64_t w, int64_t last_day, size_t max_hours, HourRange* hours);

// "/get?key=<k>" and "/fwmatch?key=<prefix>", k percent-encoded.
std::string GetPath(std::string_view key);
std::string FwmatchPath(std::string_view prefix);
// The next page of a realtime /fwmatch whose answer said X-Fwmatch-More: the records after
// `after`, the last key of the page before (docs/api.md#realtime-get-mget-fwmatch).
std::string FwmatchPagePath(std::string_view prefix, std::string_view after);
// The hours realtime may hold past watermark `w` for `range`, as one span: days > w and
// <= last_day, within the YMDH range (empty when there are none). What a breakdown asks
// realtime to sum.
HourRange RealtimeSpan(HourRange range, int64_t w, int64_t last_day);
// "/fwsum?key=<prefix>&from=<ymdh>&to=<ymdh>" over span (both tokens included: its first
// and last hour; docs/api.md#realtime-fwsum), and the page after `after` (the
// X-Fwsum-After of the page before). REQUIRES: span not empty, as RealtimeSpan gives.
std::string FwsumPath(std::string_view prefix, HourRange span);
std::string FwsumPagePath(std::string_view prefix, HourRange span, std::string_view after);
// The key of the last `key,value` line of a listing ("" when it has none). Keys never hold
// ',', values may.
std::string_view LastListedKey(std::string_view body);
// "/mget?key=<k1>&key=<k2>..." paths holding every key once, in order, each path at most
// max_bytes long (a single longer key still gets its own path).
std::vector<std::string> MgetPaths(const std::vector<std::string>& keys, size_t max_bytes);
// Packs keys into "/mget?key=<k1>&key=<k2>..." paths, in the order added, each at most
// max_bytes long and of at most max_keys keys (a single longer key still gets its own path).
// The paths of MgetPaths and of the realtime hour batches (realtime_hour_batch.h), where a
// prefix is encoded once for its keys.
class MgetPathBuilder {
 public:
  explicit MgetPathBuilder(size_t max_bytes, size_t max_keys = SIZE_MAX)
      : max_bytes_(max_bytes), max_keys_(max_keys) {}
  // Adds the key `{encoded_prefix}{encoded_suffix}`, both percent-encoded already.
  void Add(std::string_view encoded_prefix, std::string_view encoded_suffix);
  // The paths so far; the builder starts over.
  std::vector<std::string> Take();

 private:
  size_t max_bytes_, max_keys_;
  size_t keys_ = 0;  // in path_
  std::string path_;
  std::vector<std::string> paths_;
};

// The tail of a total record's value (`ymdh:n ymdh:n ...`, ascending tokens) starting at the
// first column whose token is >= `token`, found by binary search over byte offsets instead of
// parsing every earlier column: a key with a year of hourly data is 8760 columns, a 30-day
// query needs the last 720. Returns the whole value's end (empty) when no column qualifies.
std::string_view SkipColumnsBefore(std::string_view value, std::string_view token);

// Walks a sortdb-style body of `key,value\n` lines (the last newline optional). Next()
// returns false at the end; a line without ',' is reported through status().
class LineWalker {
 public:
  explicit LineWalker(std::string_view body) : rest_(body) {}
  bool Next(std::string_view* key, std::string_view* value);
  const Status& status() const { return status_; }

 private:
  std::string_view rest_;
  Status status_;
};

}  // namespace clickatron
