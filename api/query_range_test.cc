// The range form of a query (query_range.h): start and end give exactly the hours of
// [start, end) in buckets of any unit and zone, with the partial ones named.
#include "api/query_range.h"

#include <gtest/gtest.h>

#include <random>

#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

constexpr int64_t kNow = 1795000000;
constexpr int64_t kHour = 3600;

std::vector<net::QueryParam> Params(std::initializer_list<std::pair<const char*, std::string>> l,
                                    std::vector<std::string>* keep) {
  keep->clear();
  keep->reserve(l.size());
  std::vector<net::QueryParam> v;
  for (auto& [n, val] : l) {
    keep->push_back(val);
    v.push_back({n, keep->back()});
  }
  return v;
}

// Parses a /series range form and makes its buckets as the read path does (BucketsFor).
QueryParams Range(const std::string& tz, const std::string& unit, int64_t start, int64_t end,
                  std::vector<Bucket>* buckets) {
  std::vector<std::string> keep;
  QueryParams q;
  QueryError e;
  EXPECT_TRUE(ParseQueryParams(QueryKind::kSeries,
                               Params({{"ns", "u"}, {"key", "k"}, {"unit", unit}, {"timezone", tz},
                                       {"start", std::to_string(start)}, {"end", std::to_string(end)}},
                                      &keep),
                               kNow, &q, &e))
      << e.message;
  Result<std::vector<Bucket>> b = MakeBuckets(q.unit, q.tz, q.reference_ts, q.units);
  EXPECT_TRUE(b.ok()) << b.status().message();
  *buckets = std::move(b).value();
  CutToRange(q, buckets);
  return q;
}

int64_t Utc(int y, int m, int d, int h) {
  // Days from civil (Howard Hinnant's algorithm), enough for a test's fixed dates.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (era * 146097 + doe - 719468) * 86400 + h * kHour;
}

TEST(QueryRangeTest, ParsesBothEndsAndCountsTheBuckets) {
  std::vector<Bucket> b;
  // New York days 2026-10-31 .. 2026-11-02 (2026-11-01 has 25 hours).
  QueryParams q = Range("America/New_York", "day", Utc(2026, 10, 31, 4), Utc(2026, 11, 3, 5), &b);
  EXPECT_TRUE(q.has_range);
  EXPECT_EQ(q.units, 3);
  EXPECT_EQ(q.reference_ts, Utc(2026, 11, 3, 5) - 1);
  EXPECT_EQ(q.tz_offset, -5);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[2], (Bucket{Utc(2026, 10, 31, 4), Utc(2026, 11, 1, 4)}));
  EXPECT_EQ(b[1], (Bucket{Utc(2026, 11, 1, 4), Utc(2026, 11, 2, 5)}));
  EXPECT_EQ(b[0], (Bucket{Utc(2026, 11, 2, 5), Utc(2026, 11, 3, 5)}));
  EXPECT_TRUE(PartialBuckets(q, b).empty());
}

TEST(QueryRangeTest, TheEdgesInsideBucketsArePartial) {
  std::vector<Bucket> b;
  // From 13:30 UTC on the 2nd to 07:10 UTC on the 5th, in UTC days.
  QueryParams q = Range("UTC", "day", Utc(2026, 11, 2, 13) + 1800, Utc(2026, 11, 5, 7) + 600, &b);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.back(), (Bucket{Utc(2026, 11, 2, 13), Utc(2026, 11, 3, 0)}));  // begins at start's hour
  EXPECT_EQ(b.front(), (Bucket{Utc(2026, 11, 5, 0), Utc(2026, 11, 5, 8)}));  // ends with end's hour
  EXPECT_EQ(PartialBuckets(q, b), (std::vector<int64_t>{Utc(2026, 11, 2, 13), Utc(2026, 11, 5, 0)}));
  // One bucket, cut at both ends: named once.
  q = Range("UTC", "month", Utc(2026, 11, 2, 13), Utc(2026, 11, 5, 7), &b);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], (Bucket{Utc(2026, 11, 2, 13), Utc(2026, 11, 5, 7)}));
  EXPECT_EQ(PartialBuckets(q, b), (std::vector<int64_t>{Utc(2026, 11, 2, 13)}));
  // Hours are never partial; a range on the unit's edges has none.
  q = Range("-5", "hour", Utc(2026, 11, 2, 13) + 1800, Utc(2026, 11, 2, 20) + 1, &b);
  EXPECT_EQ(b.size(), 8u);
  EXPECT_TRUE(PartialBuckets(q, b).empty());
  q = Range("9", "mweek", Utc(2026, 11, 1, 15), Utc(2026, 11, 15, 15), &b);  // Mondays 00:00 +09
  EXPECT_EQ(b.size(), 2u);
  EXPECT_TRUE(PartialBuckets(q, b).empty());
}

TEST(QueryRangeTest, ErrorsNameTheParameter) {
  std::vector<std::string> keep;
  auto fails = [&](std::initializer_list<std::pair<const char*, std::string>> l) {
    QueryParams q;
    QueryError e;
    std::vector<net::QueryParam> p = Params(l, &keep);
    p.insert(p.begin(), {{"ns", "u"}, {"key", "k"}});
    EXPECT_FALSE(ParseQueryParams(QueryKind::kSeries, p, kNow, &q, &e));
    return e.status_txt;
  };
  const std::string s = std::to_string(kNow - 86400), t = std::to_string(kNow);
  EXPECT_EQ(fails({{"start", s}}), "MISSING_ARG_END");
  EXPECT_EQ(fails({{"end", t}}), "MISSING_ARG_START");
  EXPECT_EQ(fails({{"start", s}, {"end", t}, {"units", "3"}}), "INVALID_ARG_UNITS");
  EXPECT_EQ(fails({{"start", s}, {"end", t}, {"unit_reference_ts", t}}), "INVALID_ARG_UNIT_REFERENCE_TS");
  EXPECT_EQ(fails({{"start", "yesterday"}, {"end", t}}), "INVALID_ARG_START");
  EXPECT_EQ(fails({{"start", "900000000"}, {"end", t}}), "INVALID_ARG_START");  // before 2000
  EXPECT_EQ(fails({{"start", t}, {"end", t}}), "INVALID_ARG_END");
  EXPECT_EQ(fails({{"start", t}, {"end", s}}), "INVALID_ARG_END");
  EXPECT_EQ(fails({{"start", s}, {"end", "1956528001"}}), "INVALID_ARG_END");  // past 2032
  EXPECT_EQ(fails({{"start", s}, {"end", t}, {"timezone", "Asia/Kolkata"}}), "INVALID_ARG_TIMEZONE");
  // 10001 hours: too many buckets; as days, fine.
  const std::string far = std::to_string(kNow - 10001 * kHour);
  EXPECT_EQ(fails({{"start", far}, {"end", t}, {"unit", "hour"}}), "INVALID_ARG_START");
}

// Random ranges in zones with DST in both hemispheres and fixed offsets, every unit: the
// buckets are contiguous, hold exactly the hours of [start, end), and the partial ones are
// exactly those that do not begin and end on their unit's edges.
TEST(QueryRangeTest, RandomRangesHoldExactlyTheirHours) {
  std::mt19937_64 rng(34);
  const char* zones[] = {"UTC", "America/New_York", "Australia/Sydney", "Europe/London", "America/Sao_Paulo", "-5", "9"};
  const char* units[] = {"hour", "day", "week", "mweek", "month"};
  const int64_t max_span[] = {9000 * kHour, 400 * 86400, 900 * 86400, 900 * 86400, 3000 * 86400};
  for (int i = 0; i < 3000; ++i) {
    const size_t u = rng() % 5;
    const char* tz = zones[rng() % 7];
    const int64_t start = kYmdhMinTs + static_cast<int64_t>(rng() % static_cast<uint64_t>(kYmdhMaxTs - kYmdhMinTs - max_span[u]));
    const int64_t end = start + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_span[u]));
    std::vector<Bucket> b;
    QueryParams q = Range(tz, units[u], start, end, &b);
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.back().start, start - start % kHour) << i << " " << tz << " " << units[u];
    EXPECT_EQ(b.front().end, (end - 1) - (end - 1) % kHour + kHour) << i;
    for (size_t j = 0; j + 1 < b.size(); ++j) ASSERT_EQ(b[j + 1].end, b[j].start) << i;
    std::vector<int64_t> partial = PartialBuckets(q, b);
    std::vector<int64_t> want;
    for (size_t j = b.size(); j-- > 0;) {
      if (j != b.size() - 1 && j != 0) continue;  // only the ends can be cut
      Result<std::vector<Bucket>> whole = MakeBuckets(q.unit, q.tz, b[j].start, 1);
      ASSERT_TRUE(whole.ok());
      Result<std::vector<Bucket>> next = MakeBuckets(q.unit, q.tz, b[j].end, 1);
      ASSERT_TRUE(next.ok());
      const bool cut = whole->front().start != b[j].start || next->front().start != b[j].end;
      if (cut && (want.empty() || want.back() != b[j].start)) want.push_back(b[j].start);
    }
    EXPECT_EQ(partial, want) << i << " " << tz << " " << units[u];
  }
}

}  // namespace
}  // namespace clickatron
