#include "api/query_series.h"

#include <algorithm>

#include "api/query_range.h"
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

// The 4 bytes of a YMDH token as a big-endian integer: integers compare as the tokens do.
// REQUIRES: token.size() >= 4.
uint32_t TokenKey(std::string_view token) {
  return uint32_t(uint8_t(token[0])) << 24 | uint32_t(uint8_t(token[1])) << 16 |
         uint32_t(uint8_t(token[2])) << 8 | uint32_t(uint8_t(token[3]));
}

// Parses the column at the start of `rest` when it is exactly `tttt:count` (a 4-byte name
// without ':' or ' ', an optional '-' and 1-18 digits) followed by the end or by one space
// and more bytes; *used = its length including the space. False for anything else, which
// the caller leaves to ColumnReader.
bool ParseTotalColumn(std::string_view rest, int64_t* count, size_t* used) {
  if (rest.size() < kYmdhSize + 2 || rest[kYmdhSize] != ':') return false;
  for (size_t i = 0; i < kYmdhSize; ++i) {
    if (rest[i] == ':' || rest[i] == ' ') return false;
  }
  size_t i = kYmdhSize + 1;
  bool negative = rest[i] == '-';
  if (negative) ++i;
  size_t digits_from = i;
  int64_t n = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') {
    if (i - digits_from == 18) return false;  // 19+ digits: from_chars decides
    n = n * 10 + (rest[i] - '0');
    ++i;
  }
  size_t digits = i - digits_from;
  if (digits == 0) return false;
  if (i < rest.size()) {
    if (rest[i] != ' ' || i + 1 == rest.size()) return false;
    ++i;
  }
  *count = negative ? -n : n;
  *used = i;
  return true;
}

}  // namespace

SeriesSum::SeriesSum(const std::vector<Bucket>& buckets, int64_t watermark)
    : buckets_(buckets),
      watermark_(watermark),
      range_(RangeOfBuckets(buckets)),
      values_(buckets.size(), 0) {}

// Hours of YMDH tokens. A day's 24 columns share their first 3 token bytes: the date is
// decoded once per day, the hour byte per column (DecodeYmdh per column was 4 % of the
// API's /series CPU).
struct SeriesSum::HourDecoder {
  uint32_t day_key = UINT32_MAX;  // the first 3 token bytes of the decoded day
  int64_t day_start = 0;
  // key: TokenKey(token).
  Status HourOf(std::string_view token, uint32_t key, int64_t* hour) {
    int hour_of_day = HourOfDayDigit(token[3]);
    if (hour_of_day >= 0 && (key >> 8) == day_key) {
      *hour = day_start + hour_of_day * kSecondsPerHour;
      return Status::OK();
    }
    Result<int64_t> decoded = DecodeYmdh(token);
    if (!decoded.ok()) return Status::Error("archive total column: " + decoded.status().message());
    *hour = decoded.value();
    day_key = key >> 8;
    day_start = *hour - *hour % kSecondsPerDay;
    return Status::OK();
  }
};

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
  std::string_view rest = SkipColumnsBefore(value, first->view());
  size_t bucket = buckets_.size() - 1;  // oldest first, moving towards newer ones
  HourDecoder hours;
  // The columns are walked by a parser for exactly `tttt:count` (4-byte token, integer
  // compares, digits inline): ColumnReader's memchr/from_chars/memcmp per column were 17 % of
  // the API's /series CPU. Anything else (a malformed column, a huge count) goes to the
  // general ColumnReader from that column on, so errors read exactly as before.
  const uint32_t first_key = TokenKey(first->view()), last_key = TokenKey(last->view());
  int64_t count = 0;
  size_t used = 0;
  while (!rest.empty() && ParseTotalColumn(rest, &count, &used)) {
    uint32_t key = TokenKey(rest);
    if (key > last_key) return Status::OK();
    if (key >= first_key) {
      int64_t hour;
      if (Status st = hours.HourOf(rest.substr(0, kYmdhSize), key, &hour); !st.ok()) return st;
      while (hour >= buckets_[bucket].end) --bucket;
      Add(bucket, count);
    }
    rest.remove_prefix(used);
  }
  return AddArchiveColumns(rest, first->view(), last->view(), &hours, bucket);
}

// The rest of AddArchiveTotal's columns, from the first the fast parser did not take, read
// by the general ColumnReader.
Status SeriesSum::AddArchiveColumns(std::string_view rest, std::string_view first, std::string_view last,
                                    HourDecoder* hours, size_t bucket) {
  ColumnReader reader(rest);
  Column column;
  while (reader.Next(&column)) {
    if (column.name < first) continue;
    if (column.name > last) return Status::OK();
    int64_t hour;
    if (column.name.size() == kYmdhSize) {
      if (Status st = hours->HourOf(column.name, TokenKey(column.name), &hour); !st.ok()) return st;
    } else {
      Result<int64_t> decoded = DecodeYmdh(column.name);  // fails: not 4 bytes
      if (!decoded.ok()) return Status::Error("archive total column: " + decoded.status().message());
      hour = decoded.value();
    }
    while (hour >= buckets_[bucket].end) --bucket;
    Add(bucket, column.count);
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
    Result<Int128> n = ParseWideCount(value);
    if (!n.ok()) return Status::Error("realtime value of '" + std::string(key) + "': " + n.status().message());
    Add(size_t(b), n.value());
  }
  return lines.status();
}

void SeriesSum::Add(size_t bucket, Int128 n) {
  if (!AddInt128(&values_[bucket], n) && overflow_.empty()) overflow_ = std::to_string(buckets_[bucket].start);
}

bool SeriesSum::Total(Int128* total) const {
  *total = 0;
  for (Int128 v : values_) {
    if (!AddInt128(total, v)) return false;
  }
  return true;
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
  if (q.has_range) {  // the range form (query_range.h) echoes its range
    w->Key("start");
    w->Int(q.start);
    w->Key("end");
    w->Int(q.end);
  }
}

std::string SeriesJson(const QueryParams& q, const std::vector<Bucket>& buckets,
                       const std::vector<Int128>& values, Int128 total) {
  std::string out;
  out.reserve(160 + buckets.size() * 36);
  net::JsonWriter w(&out);
  w.BeginObject();
  WriteQueryHead(q, &w);
  if (q.rollup) {
    w.Key("total");
    w.Count(total);
  } else {
    w.Key("series");
    w.BeginArray();
    for (size_t i = 0; i < buckets.size(); ++i) {
      w.BeginObject();
      w.Key("dt");
      w.Int(buckets[i].start);
      w.Key("value");
      w.Count(values[i]);
      w.EndObject();
    }
    w.EndArray();
    if (q.has_range) {
      w.Key("partial");
      w.BeginArray();
      for (int64_t dt : PartialBuckets(q, buckets)) w.Int(dt);
      w.EndArray();
    }
  }
  w.EndObject();
  return out;
}

}  // namespace clickatron
