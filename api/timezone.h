// TimeZone: the zone a query's buckets are drawn in (docs/api-read.md#buckets-and-time-zones `timezone`).
//
// Either a fixed whole-hour offset from UTC (−14…14, the `timezone=-5` / `hour_offset=-5`
// forms) or an IANA zone read from the OS tz database through Howard Hinnant's date/tz
// (`America/New_York`), whose offset changes with DST. Clickatron counts whole UTC hours, so a
// bucket edge has to fall on a whole UTC hour: buckets.h rejects zones whose offset at an edge
// is not a whole number of hours (Asia/Kolkata, +05:30).
//
// Local times are plain seconds since 1970-01-01 00:00 "local" (what date calls local_seconds);
// converting a local time that does not exist (inside a spring-forward gap) gives the instant
// of the transition, and an ambiguous one (fall-back) gives its earlier instant — so a day
// that starts inside a gap starts when the clocks jump. A TimeZone is a small value; the
// IANA zone it points to lives as long as the process's tz database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace date {
class time_zone;
}

namespace clickatron {

class TimeZone {
 public:
  // UTC.
  TimeZone() = default;
  // A fixed offset of `hours` (REQUIRES: −14…14).
  static TimeZone FixedHours(int hours);

  // Parses a `timezone` parameter: an integer hour offset −14…14 (optional sign, e.g. "-5",
  // "+9", "0") or an IANA zone name. Errors name the problem ("offset 15 is outside
  // -14..14", "unknown time zone 'Mars/Olympus'").
  static Result<TimeZone> Parse(std::string_view text);
  // Parses an integer offset only (the `hour_offset` alias).
  static Result<TimeZone> ParseHours(std::string_view text);

  // Loads the tz database now (the first IANA lookup otherwise pays for it). Returns an
  // error if the OS tz database cannot be read.
  static Status Preload();

  bool is_fixed() const { return zone_ == nullptr; }
  // "UTC", "-5", "America/New_York".
  std::string Name() const;

  // Seconds east of UTC at the UTC instant `utc`.
  int64_t OffsetAt(int64_t utc) const;
  // The local wall-clock time (as seconds) at the UTC instant `utc`.
  int64_t ToLocal(int64_t utc) const { return utc + OffsetAt(utc); }
  // The UTC instant of a local wall-clock time; at a gap the transition instant, when
  // ambiguous the earlier instant.
  int64_t ToUtc(int64_t local) const;

  // True when every instant of [from, to) has a whole-hour offset here and every offset
  // change inside it falls on a whole UTC hour: then every bucket edge and reference time in
  // it is usable (buckets.h), whatever the unit.
  bool WholeHoursThroughout(int64_t from, int64_t to) const;

 private:
  int fixed_seconds_ = 0;
  const date::time_zone* zone_ = nullptr;
};

// The IANA names of the OS tz database (links included; not its files localtime and
// posixrules, nor Factory) that Parse accepts and whose zone is
// WholeHoursThroughout() the hours Clickatron can hold (2000-01-01 to 2031-12-31, ymdh.h), so
// that every query takes them, sorted: the zones the dashboard offers (GET /timezones).
// Read from the database once; empty if it cannot be read.
const std::vector<std::string>& UsableZoneNames();

}  // namespace clickatron
