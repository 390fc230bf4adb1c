#include "api/query_series.h"

#include <algorithm>

#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"
#include "net/json.h"

namespace clickatron {

namespace {

// The hour 0-23 named by a YMDH token's last byte (alphabet 0-9a-v), or -1.
int HourOfDayDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'n') return c - 'a' + 10;
  return -1;
}

}  // namespace

SeriesSum::SeriesSum(const std::vector<Bucket>& buckets, int64_t watermark)
    : buckets_(buckets),
      watermark_(watermark),
      range_(RangeOfBuckets(buckets)),
      values_(buckets.size(), 0) {}

Status SeriesSum::AddArchiveTotal(std::string_view value) {
  // The archive's hours end with W; the range's archive part is [range.start, min(end, W+1)).
  int64_t end = std::min(range_.end, (watermark_ + 1) * kSecondsPerDay);
  if (range_.start >= end) return Status::OK();
  Result<Ymdh> first = EncodeYmdh(range_.start);
  Result<Ymdh> last = EncodeYmdh(end - kSecondsPerHour);
  if (!first.ok() || !last.ok()) return Status::OK();  // unreachable: range is clamped
  // Columns ascend in time and tokens sort as time, so columns before the range are skipped
  // by comparing tokens, and the walk stops after it: a key with years of hourly data costs
  // a token compare per earlier hour, not a decode.
  ColumnReader reader(SkipColumnsBefore(value, first->view()));
  Column column;
  size_t bucket = buckets_.size() - 1;  // oldest first, moving towards newer ones
  // A day's 24 columns share their first 3 token bytes: the date is decoded once per day,
  // the hour byte per column (DecodeYmdh per column was 4 % of the API's /series CPU).
  std::string_view day_prefix;
  int64_t day_start = 0;
  while (reader.Next(&column)) {
    if (column.name < first->view()) continue;
    if (column.name > last->view()) return Status::OK();
    int64_t hour;
    int hour_of_day = column.name.size() == kYmdhSize ? HourOfDayDigit(column.name[3]) : -1;
    if (hour_of_day >= 0 && column.name.substr(0, 3) == day_prefix) {
      hour = day_start + hour_of_day * kSecondsPerHour;
    } else {
      Result<int64_t> decoded = DecodeYmdh(column.name);
      if (!decoded.ok()) return Status::Error("archive total column: " + decoded.status().message());
      hour = decoded.value();
      day_prefix = column.name.substr(0, 3);
      day_start = hour - hour % kSecondsPerDay;
    }
    while (hour >= buckets_[bucket].end) --bucket;
    AddCount(&values_[bucket], column.count);
  }
  if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
  return Status::OK();
}

Status SeriesSum::AddRealtime(std::string_view body, std::string_view total_prefix) {
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    Result<int64_t> hour = RealtimeKeyHour(key, total_prefix);
    if (!hour.ok()) return hour.status();
    if (DayOfHour(hour.value()) <= watermark_) continue;
    int b = FindBucket(buckets_, hour.value());
    if (b < 0 || !range_.Contains(hour.value())) continue;
    Result<int64_t> n = ParseCount(value);
    if (!n.ok()) return Status::Error("realtime value of '" + std::string(key) + "': " + n.status().message());
    AddCount(&values_[b], n.value());
  }
  return lines.status();
}

int64_t SeriesSum::Total() const {
  int64_t total = 0;
  for (int64_t v : values_) AddCount(&total, v);
  return total;
}

Result<int64_t> RealtimeKeyHour(std::string_view key, std::string_view prefix) {
  if (key.size() < prefix.size() + kYmdhSize || key.substr(0, prefix.size()) != prefix ||
      key[key.size() - kYmdhSize - 1] != '.') {
    return Status::Error("realtime key '" + std::string(key.substr(0, 100)) +
                         "' does not answer the question asked (prefix '" + std::string(prefix) + "')");
  }
  Result<int64_t> hour = DecodeYmdh(key.substr(key.size() - kYmdhSize));
  if (!hour.ok()) return Status::Error("realtime key '" + std::string(key.substr(0, 100)) + "': " + hour.status().message());
  return hour.value();
}

Result<int64_t> FirstArchiveHour(std::string_view value) {
  ColumnReader reader(value);
  Column column;
  if (!reader.Next(&column)) {
    if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
    return INT64_MAX;
  }
  Result<int64_t> hour = DecodeYmdh(column.name);
  if (!hour.ok()) return Status::Error("archive total column: " + hour.status().message());
  return hour.value();
}

Result<int64_t> FirstRealtimeHour(std::string_view body, std::string_view prefix, int64_t w) {
  int64_t first = INT64_MAX;
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    Result<int64_t> hour = RealtimeKeyHour(key, prefix);
    if (!hour.ok()) return hour.status();
    if (DayOfHour(hour.value()) > w && hour.value() < first) first = hour.value();
  }
  if (!lines.status().ok()) return lines.status();
  return first;
}

void WriteQueryHead(const QueryParams& q, net::JsonWriter* w) {
  w->Key("ns");
  w->String(q.ns);
  w->Key("key");
  w->String(q.key);
  w->Key("unit");
  w->String(UnitName(q.unit));
  w->Key("units");
  w->Int(q.units);
  w->Key("unit_reference_ts");
  w->Int(q.reference_ts);
  w->Key("tz_offset");
  w->Int(q.tz_offset);
}

std::string SeriesJson(const QueryParams& q, const std::vector<Bucket>& buckets,
                       const std::vector<int64_t>& values) {
  std::string out;
  out.reserve(160 + buckets.size() * 36);
  net::JsonWriter w(&out);
  w.BeginObject();
  WriteQueryHead(q, &w);
  if (q.rollup) {
    int64_t total = 0;
    for (int64_t v : values) AddCount(&total, v);
    w.Key("total");
    w.Int(total);
  } else {
    w.Key("series");
    w.BeginArray();
    for (size_t i = 0; i < buckets.size(); ++i) {
      w.BeginObject();
      w.Key("dt");
      w.Int(buckets[i].start);
      w.Key("value");
      w.Int(values[i]);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return out;
}

}  // namespace clickatron
