// Bucketing and time zones: the unit edges, DST days of 23 and 25 hours, zones that start a
// day inside a DST gap, and zones that cannot be used (off the whole hour).
#include "api/buckets.h"

#include <gtest/gtest.h>

#include <ostream>

#include "api/timezone.h"

namespace clickatron {
namespace {

}  // namespace

// Readable failures: [start, end) as unix seconds.
void PrintTo(const Bucket& b, std::ostream* os) { *os << "[" << b.start << ", " << b.end << ")"; }

namespace {

TimeZone Zone(const char* name) {
  Result<TimeZone> tz = TimeZone::Parse(name);
  EXPECT_TRUE(tz.ok()) << name << ": " << tz.status().message();
  return tz.ok() ? tz.value() : TimeZone();
}

std::vector<Bucket> Make(Unit unit, const TimeZone& tz, int64_t ref, int64_t count,
                         int64_t stop_at = INT64_MIN) {
  Result<std::vector<Bucket>> b = MakeBuckets(unit, tz, ref, count, stop_at);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? b.value() : std::vector<Bucket>();
}

constexpr int64_t kRef = 1333314000;  // 2012-04-01 21:00 UTC, a Sunday

TEST(TimeZoneTest, ParsesOffsetsAndNames) {
  EXPECT_EQ(TimeZone::Parse("-5")->OffsetAt(kRef), -5 * 3600);
  EXPECT_EQ(TimeZone::Parse("+9")->OffsetAt(kRef), 9 * 3600);
  EXPECT_EQ(TimeZone::Parse("14")->OffsetAt(kRef), 14 * 3600);
  EXPECT_EQ(TimeZone::Parse("-14")->OffsetAt(kRef), -14 * 3600);
  EXPECT_EQ(TimeZone::Parse("0")->Name(), "UTC");
  EXPECT_EQ(TimeZone::Parse("-5")->Name(), "-5");
  EXPECT_EQ(Zone("America/New_York").OffsetAt(kRef), -4 * 3600);
  EXPECT_EQ(Zone("America/New_York").Name(), "America/New_York");
  EXPECT_EQ(Zone("UTC").OffsetAt(kRef), 0);
  EXPECT_TRUE(TimeZone::ParseHours("-5").ok());
}

TEST(TimeZoneTest, RejectsWithTheReason) {
  EXPECT_EQ(TimeZone::Parse("15").status().message(), "offset '15' is outside -14..14 hours");
  EXPECT_FALSE(TimeZone::Parse("-15").ok());
  EXPECT_FALSE(TimeZone::Parse("99999999999999999999").ok());
  EXPECT_EQ(TimeZone::Parse("Mars/Olympus").status().message(),
            "unknown time zone 'Mars/Olympus'");
  EXPECT_FALSE(TimeZone::Parse("").ok());
  EXPECT_FALSE(TimeZone::Parse("-").ok());
  EXPECT_FALSE(TimeZone::Parse("../../etc/passwd").ok());
  EXPECT_FALSE(TimeZone::Parse("/etc/passwd").ok());
  EXPECT_FALSE(TimeZone::Parse("America/New York").ok());
  EXPECT_FALSE(TimeZone::ParseHours("America/New_York").ok());
  EXPECT_FALSE(TimeZone::ParseHours("1.5").ok());
}

TEST(TimeZoneTest, GapsResolveToTheTransition) {
  // 2012-03-11 02:30 does not exist in New York; the clocks jumped at 07:00 UTC.
  TimeZone ny = Zone("America/New_York");
  EXPECT_EQ(ny.ToUtc(1331433000 /* 2012-03-11 02:30 as local seconds */), 1331449200);
  // 2012-11-04 01:30 happened twice; the earlier one (EDT, 05:30 UTC) is chosen.
  EXPECT_EQ(ny.ToUtc(1351992600 /* 2012-11-04 01:30 */), 1352007000);
}

TEST(BucketsTest, ParsesUnits) {
  for (const char* name : {"hour", "day", "week", "mweek", "month"}) {
    Result<Unit> u = ParseUnit(name);
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(UnitName(u.value()), name);
  }
  EXPECT_EQ(ParseUnit("fortnight").status().message(),
            "unit 'fortnight' is not one of hour, day, week, mweek, month");
  EXPECT_FALSE(ParseUnit("Day").ok());
}

TEST(BucketsTest, DaysInUtcAndFixedOffsets) {
  // The newest bucket ends with the hour holding the reference time.
  EXPECT_EQ(Make(Unit::kDay, TimeZone(), kRef, 2),
            (std::vector<Bucket>{{1333238400, 1333317600}, {1333152000, 1333238400}}));
  EXPECT_EQ(Make(Unit::kDay, TimeZone::FixedHours(-5), kRef, 2),
            (std::vector<Bucket>{{1333256400, 1333317600}, {1333170000, 1333256400}}));
  EXPECT_EQ(Make(Unit::kDay, TimeZone::FixedHours(14), kRef, 1),
            (std::vector<Bucket>{{1333274400, 1333317600}}));
}

TEST(BucketsTest, HoursAreUtcHours) {
  EXPECT_EQ(Make(Unit::kHour, Zone("America/New_York"), kRef + 1799, 3),
            (std::vector<Bucket>{{1333314000, 1333317600},
                                 {1333310400, 1333314000},
                                 {1333306800, 1333310400}}));
}

TEST(BucketsTest, WeeksStartSundayMweeksMonday) {
  // 2012-04-01 is a Sunday: its week starts that day, its mweek on Monday 2012-03-26.
  EXPECT_EQ(Make(Unit::kWeek, TimeZone(), kRef, 2),
            (std::vector<Bucket>{{1333238400, 1333317600}, {1332633600, 1333238400}}));
  EXPECT_EQ(Make(Unit::kMweek, TimeZone(), kRef, 2),
            (std::vector<Bucket>{{1332720000, 1333317600}, {1332115200, 1332720000}}));
  EXPECT_EQ(Make(Unit::kWeek, TimeZone::FixedHours(-5), kRef, 2),
            (std::vector<Bucket>{{1333256400, 1333317600}, {1332651600, 1333256400}}));
}

TEST(BucketsTest, CalendarMonths) {
  EXPECT_EQ(Make(Unit::kMonth, TimeZone(), kRef, 5),
            (std::vector<Bucket>{{1333238400, 1333317600},
                                 {1330560000, 1333238400},    // March
                                 {1328054400, 1330560000},    // February (leap year)
                                 {1325376000, 1328054400},    // January
                                 {1322697600, 1325376000}}));  // December 2011
  EXPECT_EQ(Make(Unit::kMonth, TimeZone::FixedHours(-5), kRef, 2),
            (std::vector<Bucket>{{1333256400, 1333317600}, {1330578000, 1333256400}}));
}

TEST(BucketsTest, DstDaysOf23And25Hours) {
  // New York, 2012-03-11: a day of 23 hours.
  std::vector<Bucket> ny = Make(Unit::kDay, Zone("America/New_York"), 1331553600, 3);
  EXPECT_EQ(ny, (std::vector<Bucket>{{1331524800, 1331557200},
                                     {1331442000, 1331524800},
                                     {1331355600, 1331442000}}));
  EXPECT_EQ(ny[1].end - ny[1].start, 23 * 3600);
  // Sydney (Southern hemisphere), 2012-04-01: DST ends, a day of 25 hours.
  std::vector<Bucket> syd = Make(Unit::kDay, Zone("Australia/Sydney"), 1333288800 + 3600, 3);
  EXPECT_EQ(syd, (std::vector<Bucket>{{1333288800, 1333296000},
                                      {1333198800, 1333288800},
                                      {1333112400, 1333198800}}));
  EXPECT_EQ(syd[1].end - syd[1].start, 25 * 3600);
  // Sydney, 2012-10-07: DST starts, 23 hours.
  std::vector<Bucket> oct = Make(Unit::kDay, Zone("Australia/Sydney"), 1349614800, 2);
  EXPECT_EQ(oct[1], (Bucket{1349532000, 1349614800}));
}

TEST(BucketsTest, DayStartingInsideAGap) {
  // Sao Paulo 2012-10-21: midnight did not exist (00:00 -03 jumped to 01:00 -02); the day
  // starts at the jump, 03:00 UTC.
  std::vector<Bucket> sp = Make(Unit::kDay, Zone("America/Sao_Paulo"), 1350871200, 3);
  EXPECT_EQ(sp, (std::vector<Bucket>{{1350871200, 1350874800},
                                     {1350788400, 1350871200},
                                     {1350702000, 1350788400}}));
}

TEST(BucketsTest, ZonesOffTheWholeHourAreRefused) {
  Result<std::vector<Bucket>> b = MakeBuckets(Unit::kDay, Zone("Asia/Kolkata"), kRef, 2);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "time zone Asia/Kolkata is at UTC+05:30 at the bucket edge 2012-04-01 18:30 UTC; "
            "counts are kept per UTC hour, so only zones on a whole-hour offset at every "
            "bucket edge can be used");
  EXPECT_FALSE(MakeBuckets(Unit::kHour, Zone("Asia/Kolkata"), kRef, 2).ok());
  EXPECT_FALSE(WholeHourOffsetAt(Zone("Asia/Kathmandu"), kRef).ok());
  EXPECT_EQ(WholeHourOffsetAt(Zone("America/New_York"), kRef).value(), -4);
  EXPECT_EQ(WholeHourOffsetAt(Zone("Australia/Sydney"), kRef).value(), 10);
}

TEST(BucketsTest, LongRangesReachBeforeAnyDataWithoutFailing) {
  // 10000 weeks from 2012 reach 1820, New York's local mean time (-4:56:02): not checked.
  Result<std::vector<Bucket>> b =
      MakeBuckets(Unit::kWeek, Zone("America/New_York"), kRef, kMaxBuckets);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->size(), static_cast<size_t>(kMaxBuckets));
  for (size_t i = 1; i < b->size(); ++i) ASSERT_EQ((*b)[i].end, (*b)[i - 1].start);
}

TEST(BucketsTest, StopsAtTheBucketHoldingTheFirstHour) {
  // units=-1 with data first at 2012-04-01 03:00: one day bucket.
  EXPECT_EQ(Make(Unit::kDay, TimeZone(), kRef, kMaxBuckets + 1, 1333249200).size(), 1u);
  EXPECT_EQ(Make(Unit::kDay, TimeZone::FixedHours(-5), kRef, kMaxBuckets + 1, 1333249200).size(),
            2u);
  EXPECT_EQ(Make(Unit::kHour, TimeZone(), kRef, kMaxBuckets + 1, 1333249200).size(), 19u);
  // More than kMaxBuckets: the caller sees kMaxBuckets + 1.
  EXPECT_EQ(Make(Unit::kHour, TimeZone(), kRef, kMaxBuckets + 1, 946684800).size(),
            static_cast<size_t>(kMaxBuckets + 1));
}

TEST(BucketsTest, FindBucket) {
  std::vector<Bucket> ny = Make(Unit::kDay, Zone("America/New_York"), 1331553600, 3);
  EXPECT_EQ(FindBucket(ny, 1331355600 - 3600), -1);
  EXPECT_EQ(FindBucket(ny, 1331355600), 2);
  EXPECT_EQ(FindBucket(ny, 1331442000 - 3600), 2);
  EXPECT_EQ(FindBucket(ny, 1331442000), 1);
  EXPECT_EQ(FindBucket(ny, 1331524800), 0);
  EXPECT_EQ(FindBucket(ny, 1331553600), 0);
  EXPECT_EQ(FindBucket(ny, 1331557200), -1);  // after the reference hour
  EXPECT_EQ(FindBucket({}, 0), -1);
}

}  // namespace
}  // namespace clickatron
