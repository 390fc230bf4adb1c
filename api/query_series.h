// Series arithmetic: the hours of a total rolled up into buckets (docs/api.md#api-series /series), and the
// JSON of the answer. Pure code — query_service.cc feeds it the backends' bodies.
//
// The archive total record `{ns}|{key}` holds `ymdh:n` columns in time order; realtime
// answers (/mget or /fwmatch) hold `{ns}|{key}.{ymdh},n` lines. SeriesSum takes archive
// hours only of days <= W and realtime hours only of days > W (query_plan.h), and only hours
// inside the buckets. Bad backend data is an error, never a silently wrong number. Sums are
// exact in 128 bits (docs/formats.md#counts); one that would leave them is named by
// overflow(), and the answer is then an error, never a clamped number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/buckets.h"
#include "api/query_params.h"
#include "api/query_plan.h"
#include "base/int128.h"
#include "base/status.h"
#include "keyformat/records.h"

namespace clickatron {

namespace net {
class JsonWriter;
}

class SeriesSum {
 public:
  // REQUIRES: buckets is not empty and outlives this object.
  SeriesSum(const std::vector<Bucket>& buckets, int64_t watermark);

  // The value of the archive total record (columns of days > W are ignored).
  Status AddArchiveTotal(std::string_view value);
  // A realtime body of `{total_prefix}{ymdh},n` lines (total_prefix = "{ns}|{key}.");
  // hours of days <= W are ignored.
  Status AddRealtime(std::string_view body, std::string_view total_prefix);

  // One sum per bucket, in the buckets' order. REQUIRES: overflow() is empty.
  const std::vector<Int128>& values() const { return values_; }
  // The sum of every bucket; false when it leaves 128 bits.
  bool Total(Int128* total) const;
  // The start (unix seconds) of the first bucket whose sum left 128 bits, as text; empty
  // when none did.
  const std::string& overflow() const { return overflow_; }

 private:
  struct HourDecoder;
  void Add(size_t bucket, Int128 n);
  // AddArchiveTotal's columns from where its fast parser stopped (query_series.cc).
  Status AddArchiveColumns(std::string_view rest, std::string_view first, std::string_view last,
                           HourDecoder* hours, size_t bucket);

  const std::vector<Bucket>& buckets_;
  int64_t watermark_;
  HourRange range_;
  std::vector<Int128> values_;
  std::string overflow_;
};

// The first hour (unix seconds) with data in an archive total value, or INT64_MAX if none.
Result<int64_t> FirstArchiveHour(std::string_view value);
// The first hour of a day > w in a realtime body of `{prefix}...{ymdh},n` lines, whose keys
// end in the YMDH token; INT64_MAX if none.
Result<int64_t> FirstRealtimeHour(std::string_view body, std::string_view prefix, int64_t w);

// The hour (unix seconds) named by the last 4 bytes of a realtime key that starts with
// prefix; fails when the key does not have that shape.
Result<int64_t> RealtimeKeyHour(std::string_view key, std::string_view prefix);

// The `data` object of a /series answer: ns, key, unit, units, unit_reference_ts, tz_offset
// (and start, end with the range form), then "series" (newest first, {"dt", "value"}; with
// the range form "partial", the dts of its partial buckets: query_range.h) or, with rollup,
// "total" (total: the values' sum, SeriesSum::Total). Values are exact integer literals of
// up to 128 bits.
std::string SeriesJson(const QueryParams& q, const std::vector<Bucket>& buckets,
                       const std::vector<Int128>& values, Int128 total);

// Writes the members every query answer starts with (ns ... tz_offset, and start, end with
// the range form) into an open object.
void WriteQueryHead(const QueryParams& q, net::JsonWriter* w);

}  // namespace clickatron
