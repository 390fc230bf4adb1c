#include "api/buckets.h"

#include <chrono>
#include <cstdio>
#include <string>

#include <date/date.h>

#include "keyformat/ymdh.h"

namespace clickatron {

namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// Start (local seconds) of the unit holding the local time `local`.
int64_t LocalUnitStart(Unit unit, int64_t local) {
  int64_t days = FloorDiv(local, kSecondsPerDay);
  switch (unit) {
    case Unit::kHour:
      return FloorDiv(local, kSecondsPerHour) * kSecondsPerHour;
    case Unit::kDay:
      break;
    case Unit::kWeek:     // 1970-01-01 was a Thursday: (days + 4) % 7 is 0 on Sundays
      days -= FloorMod(days + 4, 7);
      break;
    case Unit::kMweek:    // ... and (days + 3) % 7 is 0 on Mondays
      days -= FloorMod(days + 3, 7);
      break;
    case Unit::kMonth: {
      date::year_month_day ymd{date::sys_days{date::days{days}}};
      days = date::sys_days{ymd.year() / ymd.month() / 1}.time_since_epoch().count();
      break;
    }
  }
  return days * kSecondsPerDay;
}

// Start (local seconds) of the unit before the one starting at local_start.
int64_t LocalPreviousStart(Unit unit, int64_t local_start) {
  switch (unit) {
    case Unit::kHour:
      return local_start - kSecondsPerHour;
    case Unit::kDay:
      return local_start - kSecondsPerDay;
    case Unit::kWeek:
    case Unit::kMweek:
      return local_start - 7 * kSecondsPerDay;
    case Unit::kMonth: {
      date::year_month_day ymd{date::sys_days{date::days{FloorDiv(local_start, kSecondsPerDay)}}};
      date::year_month_day prev = ymd - date::months{1};
      return date::sys_days{prev}.time_since_epoch().count() * kSecondsPerDay;
    }
  }
  return local_start;
}

std::string FormatUtc(int64_t utc) {
  date::sys_seconds t{std::chrono::seconds(utc)};
  return date::format("%Y-%m-%d %H:%M UTC", t);
}

Status OffsetError(const TimeZone& tz, int64_t edge, const char* where) {
  int64_t offset = tz.OffsetAt(edge);
  char sign = offset < 0 ? '-' : '+';
  int64_t a = offset < 0 ? -offset : offset;
  char hhmm[16];
  snprintf(hhmm, sizeof hhmm, "%c%02d:%02d", sign, static_cast<int>(a / 3600),
           static_cast<int>(a % 3600 / 60));
  return Status::Error("time zone " + tz.Name() + " is at UTC" + hhmm + " " + where + " " +
                       FormatUtc(edge) + "; counts are kept per UTC hour, so only zones on a "
                       "whole-hour offset at every bucket edge can be used");
}

// An edge is usable when it is a whole UTC hour (and, for hour buckets, the zone's offset
// there is whole, so the local hour is that UTC hour). Edges before any data are not checked.
bool EdgeUsable(Unit unit, const TimeZone& tz, int64_t edge) {
  if (edge < kYmdhMinTs) return true;
  if (FloorMod(edge, kSecondsPerHour) != 0) return false;
  return unit != Unit::kHour || tz.is_fixed() || FloorMod(tz.OffsetAt(edge), kSecondsPerHour) == 0;
}

}  // namespace

Result<Unit> ParseUnit(std::string_view text) {
  if (text == "hour") return Unit::kHour;
  if (text == "day") return Unit::kDay;
  if (text == "week") return Unit::kWeek;
  if (text == "mweek") return Unit::kMweek;
  if (text == "month") return Unit::kMonth;
  return Status::Error("unit '" + std::string(text) + "' is not one of hour, day, week, mweek, month");
}

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kHour: return "hour";
    case Unit::kDay: return "day";
    case Unit::kWeek: return "week";
    case Unit::kMweek: return "mweek";
    case Unit::kMonth: return "month";
  }
  return "day";
}

Result<std::vector<Bucket>> MakeBuckets(Unit unit, const TimeZone& tz, int64_t ref_utc,
                                        int64_t max_count, int64_t stop_at) {
  std::vector<Bucket> buckets;
  buckets.reserve(static_cast<size_t>(max_count < 64 ? max_count : 64));
  int64_t end = FloorDiv(ref_utc, kSecondsPerHour) * kSecondsPerHour + kSecondsPerHour;
  if (unit == Unit::kHour) {
    // UTC hours; the zone only has to be on a whole-hour offset at each of them.
    for (int64_t start = end - kSecondsPerHour; static_cast<int64_t>(buckets.size()) < max_count;
         start -= kSecondsPerHour) {
      if (!EdgeUsable(unit, tz, start)) return OffsetError(tz, start, "at the bucket edge");
      buckets.push_back({start, start + kSecondsPerHour});
      if (start <= stop_at) break;
    }
    return buckets;
  }
  int64_t local_start = LocalUnitStart(unit, tz.ToLocal(ref_utc));
  while (static_cast<int64_t>(buckets.size()) < max_count) {
    int64_t start = tz.ToUtc(local_start);
    if (!EdgeUsable(unit, tz, start)) return OffsetError(tz, start, "at the bucket edge");
    buckets.push_back({start, end});
    if (start <= stop_at) break;
    end = start;
    local_start = LocalPreviousStart(unit, local_start);
  }
  return buckets;
}

Result<int> WholeHourOffsetAt(const TimeZone& tz, int64_t utc) {
  int64_t offset = tz.OffsetAt(utc);
  if (FloorMod(offset, kSecondsPerHour) != 0) return OffsetError(tz, utc, "at unit_reference_ts");
  return static_cast<int>(offset / kSecondsPerHour);
}

int FindBucket(const std::vector<Bucket>& buckets, int64_t hour) {
  if (buckets.empty() || hour < buckets.back().start || hour >= buckets.front().end) return -1;
  // Starts descend with the index: find the first bucket whose start is <= hour.
  size_t lo = 0, hi = buckets.size() - 1;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (buckets[mid].start <= hour) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return static_cast<int>(lo);
}

}  // namespace clickatron
