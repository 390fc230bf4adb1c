// The zones the API offers (UsableZoneNames, GET /timezones) are exactly zones every query
// takes: whole-hour offsets and transitions from 2000 to 2031.
#include "api/timezone.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "api/buckets.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

bool Listed(const std::string& name) {
  const std::vector<std::string>& names = UsableZoneNames();
  return std::binary_search(names.begin(), names.end(), name);
}

TEST(TimeZoneTest, UsableZonesLeaveOutHalfHourZones) {
  const std::vector<std::string>& names = UsableZoneNames();
  ASSERT_GT(names.size(), 300u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* zone : {"America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Tokyo", "UTC",
                           "America/Sao_Paulo", "Pacific/Auckland"}) {
    EXPECT_TRUE(Listed(zone)) << zone;
  }
  // Half- and quarter-hour zones, now or at some time since 2000 (Caracas was -04:30 from
  // 2007 to 2016), links included.
  for (const char* zone : {"America/St_Johns", "Asia/Tehran", "Australia/Adelaide", "Pacific/Chatham",
                           "Asia/Calcutta", "Asia/Kolkata", "Asia/Kathmandu", "America/Caracas",
                           "Australia/Lord_Howe", "localtime", "posixrules", "Factory"}) {
    EXPECT_FALSE(Listed(zone)) << zone;
  }
}

// Every listed zone gives buckets of every unit across the whole YMDH range without an
// error: the API never refuses a zone it offers.
TEST(TimeZoneTest, EveryUsableZoneMakesEveryBucketFrom2000To2031) {
  for (const std::string& name : UsableZoneNames()) {
    Result<TimeZone> tz = TimeZone::Parse(name);
    ASSERT_TRUE(tz.ok()) << name;
    for (Unit unit : {Unit::kDay, Unit::kWeek, Unit::kMweek, Unit::kMonth}) {
      Result<std::vector<Bucket>> b = MakeBuckets(unit, *tz, kYmdhMaxTs, kMaxBuckets + 1, kYmdhMinTs);
      ASSERT_TRUE(b.ok()) << name << ": " << b.status().message();
    }
    // Days reach 10000 buckets back from the end: the rest from 2000 on.
    ASSERT_TRUE(MakeBuckets(Unit::kDay, *tz, kYmdhMinTs + 2000 * 86400LL, 2001, kYmdhMinTs).ok()) << name;
    EXPECT_TRUE(WholeHourOffsetAt(*tz, kYmdhMinTs).ok()) << name;
  }
}

TEST(TimeZoneTest, WholeHoursThroughout) {
  EXPECT_TRUE(TimeZone::FixedHours(-5).WholeHoursThroughout(kYmdhMinTs, kYmdhMaxTs));
  Result<TimeZone> caracas = TimeZone::Parse("America/Caracas");
  ASSERT_TRUE(caracas.ok());
  EXPECT_TRUE(caracas->WholeHoursThroughout(kYmdhMinTs, 1180000000));   // 2000 .. 2007-05: -04:00
  EXPECT_FALSE(caracas->WholeHoursThroughout(kYmdhMinTs, kYmdhMaxTs));  // -04:30 from 2007-12
  EXPECT_TRUE(caracas->WholeHoursThroughout(1470000000, kYmdhMaxTs));   // -04:00 again from 2016-05
}

}  // namespace
}  // namespace clickatron
