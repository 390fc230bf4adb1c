// The read path's pure parts: parameters, planning, series and breakdown arithmetic, on the
// golden seed example's records.
#include <gtest/gtest.h>

#include "api/query_breakdown.h"
#include "api/query_params.h"
#include "api/query_plan.h"
#include "api/realtime_hour_batch.h"
#include "api/query_series.h"
#include "keyformat/columns.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

constexpr int64_t kRef = 1333314000;  // 2012-04-01 21:00 UTC
constexpr int64_t kApr1 = 15431;      // days since 1970 of 2012-04-01

std::vector<net::QueryParam> Params(std::initializer_list<std::pair<const char*, const char*>> l) {
  std::vector<net::QueryParam> v;
  for (auto& [n, val] : l) v.push_back({n, val});
  return v;
}

QueryError Fails(QueryKind kind, std::initializer_list<std::pair<const char*, const char*>> l) {
  QueryParams q;
  QueryError e;
  EXPECT_FALSE(ParseQueryParams(kind, Params(l), kRef, &q, &e));
  return e;
}

TEST(QueryParamsTest, Defaults) {
  QueryParams q;
  QueryError e;
  ASSERT_TRUE(ParseQueryParams(QueryKind::kSeries, Params({{"ns", "u"}, {"key", "jehiah"}}), kRef,
                               &q, &e));
  EXPECT_EQ(q.ns, "u");
  EXPECT_EQ(q.stored_key, "jehiah");
  EXPECT_EQ(q.unit, Unit::kDay);
  EXPECT_EQ(q.units, -1);
  EXPECT_EQ(q.reference_ts, kRef);
  EXPECT_EQ(q.tz_offset, 0);
  EXPECT_FALSE(q.rollup);
}

TEST(QueryParamsTest, EverythingGiven) {
  QueryParams q;
  QueryError e;
  ASSERT_TRUE(ParseQueryParams(
      QueryKind::kBreakdown,
      Params({{"ns", "u"}, {"key", "http://www.facebook.com/"}, {"sub", "r"}, {"unit", "mweek"},
              {"units", "12"}, {"unit_reference_ts", "1331553600"},
              {"timezone", "America/New_York"}, {"limit", "7"}}),
      kRef, &q, &e))
      << e.message;
  EXPECT_EQ(q.stored_key, "h0aMB8AuNw4=");
  EXPECT_EQ(q.sub, "r");
  EXPECT_EQ(q.unit, Unit::kMweek);
  EXPECT_EQ(q.units, 12);
  EXPECT_EQ(q.reference_ts, 1331553600);
  EXPECT_EQ(q.tz_offset, -4);
  EXPECT_EQ(q.limit, 7);
  ASSERT_TRUE(ParseQueryParams(QueryKind::kSeries,
                               Params({{"ns", "u"}, {"key", "k"}, {"hour_offset", "-5"},
                                       {"unit_reference_ts", "now"}, {"rollup", "true"}}),
                               kRef, &q, &e));
  EXPECT_EQ(q.tz_offset, -5);
  EXPECT_TRUE(q.rollup);
  EXPECT_EQ(q.reference_ts, kRef);
}

TEST(QueryParamsTest, ErrorsNameTheParameter) {
  using K = QueryKind;
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}}).status_txt, "MISSING_ARG_KEY");
  EXPECT_EQ(Fails(K::kSeries, {{"key", "k"}}).status_txt, "MISSING_ARG_NS");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", ""}}).status_txt, "MISSING_ARG_KEY");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "_l"}, {"key", "k"}}).status_txt, "INVALID_ARG_NS");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u|x"}, {"key", "k"}}).status_txt, "INVALID_ARG_NS");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", std::string(4097, 'k').c_str()}}).status_txt,
            "INVALID_ARG_KEY");
  QueryError unit = Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"unit", "fortnight"}});
  EXPECT_EQ(unit.status_txt, "INVALID_ARG_UNIT");
  EXPECT_EQ(unit.code, 400);
  EXPECT_EQ(unit.message, "unit 'fortnight' is not one of hour, day, week, mweek, month");
  for (const char* units : {"0", "10001", "-2", "1.5", "+3", "x"}) {
    EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"units", units}}).status_txt,
              "INVALID_ARG_UNITS") << units;
  }
  for (const char* tz : {"15", "Mars/Olympus", "Asia/Kolkata", "-15"}) {
    EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"timezone", tz}}).status_txt,
              "INVALID_ARG_TIMEZONE") << tz;
  }
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"hour_offset", "New_York"}}).status_txt,
            "INVALID_ARG_HOUR_OFFSET");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"hour_offset", "1"}, {"timezone", "1"}})
                .status_txt,
            "INVALID_ARG_HOUR_OFFSET");
  for (const char* ref : {"yesterday", "0", "99999999999", "-5", "1e9"}) {
    EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"unit_reference_ts", ref}}).status_txt,
              "INVALID_ARG_UNIT_REFERENCE_TS") << ref;
  }
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"rollup", "yes"}}).status_txt,
            "INVALID_ARG_ROLLUP");
  EXPECT_EQ(Fails(K::kBreakdown, {{"ns", "u"}, {"key", "k"}}).status_txt, "MISSING_ARG_SUB");
  EXPECT_EQ(Fails(K::kBreakdown, {{"ns", "u"}, {"key", "k"}, {"sub", "a.b"}}).status_txt,
            "INVALID_ARG_SUB");
  for (const char* limit : {"0", "1001", "ten"}) {
    EXPECT_EQ(Fails(K::kBreakdown, {{"ns", "u"}, {"key", "k"}, {"sub", "c"}, {"limit", limit}})
                  .status_txt,
              "INVALID_ARG_LIMIT");
  }
}

// A parameter an endpoint does not take, or one given twice, is refused before anything else:
// a typo (`timzone`, `limt`) would otherwise change the answer silently.
TEST(QueryParamsTest, UnknownAndRepeatedParametersAreRefused) {
  using K = QueryKind;
  QueryError e = Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"timzone", "America/New_York"}});
  EXPECT_EQ(e.code, 400);
  EXPECT_EQ(e.status_txt, "UNKNOWN_ARG");
  EXPECT_EQ(e.message,
            "unknown parameter 'timzone' (/series takes ns, key, unit, units, unit_reference_ts, start, end, "
            "timezone, hour_offset, rollup)");
  EXPECT_EQ(Fails(K::kBreakdown, {{"ns", "u"}, {"key", "k"}, {"sub", "c"}, {"limt", "3"}}).status_txt, "UNKNOWN_ARG");
  EXPECT_EQ(Fails(K::kBreakdown, {{"ns", "u"}, {"key", "k"}, {"sub", "c"}, {"rollup", "true"}}).status_txt,
            "UNKNOWN_ARG");
  EXPECT_EQ(Fails(K::kSubtotals, {{"ns", "u"}, {"key", "k"}, {"limit", "3"}}).status_txt, "UNKNOWN_ARG");
  EXPECT_EQ(Fails(K::kLeaderboard, {{"ns", "u"}, {"key", "k"}}).status_txt, "UNKNOWN_ARG");
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"access_token", "x"}}).status_txt, "UNKNOWN_ARG");
  // The first problem in request order is the one named, even before a missing key.
  EXPECT_EQ(Fails(K::kSeries, {{"x", "1"}, {"ns", "u"}}).message.substr(0, 24), "unknown parameter 'x' (/");
  QueryError twice = Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"units", "3"}, {"units", "4"}});
  EXPECT_EQ(twice.status_txt, "INVALID_ARG_UNITS");
  EXPECT_EQ(twice.message, "units is given twice; give it once");
  // An empty value given twice is still given twice.
  EXPECT_EQ(Fails(K::kSeries, {{"ns", "u"}, {"key", "k"}, {"unit", ""}, {"unit", ""}}).status_txt,
            "INVALID_ARG_UNIT");
  QueryError none;
  EXPECT_FALSE(CheckParamNames(Params({{"a", "1"}}), "/cluster", {}, &none));
  EXPECT_EQ(none.message, "unknown parameter 'a' (/cluster takes none)");
  EXPECT_TRUE(CheckParamNames(Params({{"hash", "h"}}), "/lookup", {"hash"}, &none));
}

TEST(QueryPlanTest, Watermark) {
  EXPECT_EQ(ParseWatermark(std::nullopt).value(), kNoArchiveDays);
  EXPECT_EQ(ParseWatermark("2012-04-01").value(), kApr1);
  EXPECT_FALSE(ParseWatermark("2012-04-31").ok());
  EXPECT_FALSE(ParseWatermark("").ok());
  EXPECT_EQ(DayOfHour(kRef), kApr1);
  EXPECT_EQ(DayOfHour(kApr1 * 86400), kApr1);
  EXPECT_EQ(DayOfHour(kApr1 * 86400 - 1), kApr1 - 1);
}

TEST(QueryPlanTest, RealtimeHoursArePastTheWatermarkUpToTomorrow) {
  HourRange range{(kApr1 - 10) * 86400, kRef + 3600};
  HourRange hours;
  ASSERT_TRUE(RealtimeHours(range, kApr1 - 1, kApr1 + 1, 96, &hours));
  ASSERT_EQ((hours.end - hours.start) / 3600, 22);  // 2012-04-01 00:00 .. 21:00
  EXPECT_EQ(hours.start, kApr1 * 86400);
  EXPECT_EQ(hours.end - 3600, kRef);
  ASSERT_TRUE(RealtimeHours(range, kApr1, kApr1 + 1, 96, &hours));
  EXPECT_TRUE(hours.empty());
  // No archive days: the whole range is realtime's, more than one /mget is worth.
  EXPECT_FALSE(RealtimeHours(range, kNoArchiveDays, kApr1 + 1, 96, &hours));
  // Nothing realtime can hold: the range ended before today.
  ASSERT_TRUE(RealtimeHours(range, kNoArchiveDays, kApr1 - 20, 96, &hours));
  EXPECT_TRUE(hours.empty());
}

TEST(QueryPlanTest, Paths) {
  EXPECT_EQ(GetPath("u|jehiah"), "/get?key=u%7Cjehiah");
  EXPECT_EQ(FwmatchPath("r.u|jehiah."), "/fwmatch?key=r.u%7Cjehiah.");
  EXPECT_EQ(FwmatchPagePath("r.u|jehiah.", "r.u|jehiah.abc.c4b3"),
            "/fwmatch?key=r.u%7Cjehiah.&after=r.u%7Cjehiah.abc.c4b3");
  EXPECT_EQ(LastListedKey("a,1\nb,2\n"), "b");
  EXPECT_EQ(LastListedKey("a,1\n_l|h0aMB8AuNw4=,http://x/?a=1,2\n"), "_l|h0aMB8AuNw4=");  // values hold ','
  EXPECT_EQ(LastListedKey("only,7"), "only");
  EXPECT_EQ(LastListedKey(""), "");
  EXPECT_EQ(LastListedKey("\n"), "");
  std::vector<std::string> keys = {"_l|h0aMB8AuNw4=", "_l|HMCJVIkxxP4="};
  EXPECT_EQ(MgetPaths(keys, 6000),
            std::vector<std::string>{"/mget?key=_l%7Ch0aMB8AuNw4%3D&key=_l%7CHMCJVIkxxP4%3D"});
  EXPECT_EQ(MgetPaths(keys, 30),
            (std::vector<std::string>{"/mget?key=_l%7Ch0aMB8AuNw4%3D", "/mget?key=_l%7CHMCJVIkxxP4%3D"}));
  std::vector<std::string> many(1000, "c.u|jehiah.c41l");
  std::vector<std::string> paths = MgetPaths(many, 6000);
  size_t count = 0;
  for (const std::string& p : paths) {
    EXPECT_LE(p.size(), 6000u);
    for (size_t i = p.find("key="); i != std::string::npos; i = p.find("key=", i + 1)) ++count;
  }
  EXPECT_EQ(count, 1000u);
  EXPECT_TRUE(MgetPaths({}, 6000).empty());
  // A batch of one hour ask gives MgetPaths' paths for its prefix + YMDH keys, cut alike:
  // a lone /series asks realtime what it asked before batching.
  for (size_t max : {size_t{30}, size_t{100}, size_t{6000}}) {
    std::vector<std::string> hour_keys;
    for (int64_t h = kRef - 30 * 3600; h <= kRef; h += 3600) {
      hour_keys.push_back("bench|a+b/c." + std::string(EncodeYmdh(h)->view()));
    }
    const HourAsk ask{"bench|a+b/c.", HourRange{kRef - 30 * 3600, kRef + 3600}};
    EXPECT_EQ(BatchMgetPaths({ask}, max, 96), MgetPaths(hour_keys, max)) << max;
  }
  EXPECT_TRUE(BatchMgetPaths({}, 6000, 96).empty());
}

TEST(QueryPlanTest, SkipColumnsBefore) {
  const std::string_view v = "c413:2 c41l:5 c420:17 c42a:1";
  EXPECT_EQ(SkipColumnsBefore(v, "c410"), v);
  EXPECT_EQ(SkipColumnsBefore(v, "c413"), v);
  EXPECT_EQ(SkipColumnsBefore(v, "c414"), "c41l:5 c420:17 c42a:1");
  EXPECT_EQ(SkipColumnsBefore(v, "c41l"), "c41l:5 c420:17 c42a:1");
  EXPECT_EQ(SkipColumnsBefore(v, "c41m"), "c420:17 c42a:1");
  EXPECT_EQ(SkipColumnsBefore(v, "c42a"), "c42a:1");
  EXPECT_EQ(SkipColumnsBefore(v, "c42b"), "");
  EXPECT_EQ(SkipColumnsBefore("", "c42b"), "");
  EXPECT_EQ(SkipColumnsBefore("c413:2", "c413"), "c413:2");
  EXPECT_EQ(SkipColumnsBefore("c413:2", "c414"), "");
  // Against a linear walk, on a long record with counts of every width.
  std::string value;
  std::vector<std::string> tokens;
  for (int64_t h = 1333238400, i = 0; i < 3000; h += 3600 * (1 + i % 3), ++i) {
    tokens.emplace_back(EncodeYmdh(h)->view());
    if (!value.empty()) value += ' ';
    value += tokens.back() + ":" + std::to_string(i * i * 7919 % 100003);
  }
  for (size_t i = 0; i < tokens.size(); i += 7) {
    std::string_view tail = SkipColumnsBefore(value, tokens[i]);
    ASSERT_EQ(tail.substr(0, 4), tokens[i]);
    ASSERT_EQ(value.size() - tail.size(), value.find(tokens[i]));
  }
}

TEST(QueryPlanTest, LineWalker) {
  LineWalker lines("a,1\nb,x:1 y:2\n\nc,\n");
  std::string_view k, v;
  ASSERT_TRUE(lines.Next(&k, &v));
  EXPECT_EQ(k, "a");
  EXPECT_EQ(v, "1");
  ASSERT_TRUE(lines.Next(&k, &v));
  EXPECT_EQ(v, "x:1 y:2");
  ASSERT_TRUE(lines.Next(&k, &v));
  EXPECT_EQ(k, "c");
  EXPECT_EQ(v, "");
  EXPECT_FALSE(lines.Next(&k, &v));
  EXPECT_TRUE(lines.status().ok());
  LineWalker bad("no-comma\n");
  EXPECT_FALSE(bad.Next(&k, &v));
  EXPECT_FALSE(bad.status().ok());
}

std::vector<Bucket> Days(int64_t ref, int64_t n, int hours = 0) {
  return MakeBuckets(Unit::kDay, TimeZone::FixedHours(hours), ref, n).value();
}

TEST(SeriesSumTest, ArchiveAndRealtimeSplitAtTheWatermark) {
  std::vector<Bucket> buckets = Days(kRef, 2);
  // All in the archive (W = 2012-04-01).
  SeriesSum all(buckets, kApr1);
  ASSERT_TRUE(all.AddArchiveTotal("c413:2 c41l:5").ok());
  ASSERT_TRUE(all.AddRealtime("u|jehiah.c41l,100\n", "u|jehiah.").ok());  // not realtime's hour
  EXPECT_EQ(all.values(), (std::vector<Int128>{7, 0}));
  // W = 2012-03-31: April 1st comes from realtime only.
  SeriesSum split(buckets, kApr1 - 1);
  ASSERT_TRUE(split.AddArchiveTotal("c3uf:4 c3vf:1 c413:2 c41l:5").ok());
  ASSERT_TRUE(split.AddRealtime("u|jehiah.c413,2\nu|jehiah.c41l,5\nu|jehiah.c41m,9\n", "u|jehiah.").ok());
  EXPECT_EQ(split.values(), (std::vector<Int128>{7, 1}));
  Int128 total = 0;
  EXPECT_TRUE(split.Total(&total));
  EXPECT_TRUE(total == 8);
  // Realtime lines that are not this key's are an error, not a number.
  EXPECT_FALSE(split.AddRealtime("u|jehiahx.c41l,5\n", "u|jehiah.").ok());
  EXPECT_FALSE(split.AddRealtime("u|jehiah.c41l,five\n", "u|jehiah.").ok());
  EXPECT_FALSE(all.AddArchiveTotal("c413:x").ok());
}

// The archive total walk (a parser specialised for `tttt:count` with a general fallback)
// against the plain definition: SkipColumnsBefore, then ColumnReader + DecodeYmdh per column.
TEST(SeriesSumTest, ArchiveTotalMatchesThePlainColumnWalk) {
  std::vector<Bucket> buckets = Days(kRef, 3);
  auto plain = [&](std::string_view value, std::vector<Int128>* values) -> Status {
    values->assign(buckets.size(), 0);
    HourRange range = RangeOfBuckets(buckets);
    Ymdh first = EncodeYmdh(range.start).value(), last = EncodeYmdh(range.end - 3600).value();
    ColumnReader reader(SkipColumnsBefore(value, first.view()));
    Column c;
    while (reader.Next(&c)) {
      if (c.name < first.view()) continue;
      if (c.name > last.view()) break;
      Result<int64_t> hour = DecodeYmdh(c.name);
      if (!hour.ok()) return Status::Error("archive total column: " + hour.status().message());
      if (!range.Contains(hour.value())) continue;
      (*values)[FindBucket(buckets, hour.value())] += c.count;
    }
    if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
    return Status::OK();
  };
  std::string all_hours;  // every hour of March 29 .. April 2, counts i - 50
  for (int64_t h = kRef - 4 * 86400, i = 0; h < kRef + 86400; h += 3600, ++i) {
    AppendColumn(&all_hours, 0, EncodeYmdh(h)->view(), i - 50);
  }
  for (std::string value : {all_hours, std::string("c3uf:4 c3vf:1 c413:2 c41l:5"),
                            std::string("c413:-7 c414:0012 c415:999999999999999999"),
                            std::string("c413:1 c414:1234567890123456789"),  // 19 digits
                            std::string("c413:1 c414:9223372036854775808"),  // past int64: exact
                            std::string("c413:1 c414:-170141183460469231731687303715884105728"),
                            std::string("c413:1 c414:170141183460469231731687303715884105728"),  // past 128 bits
                            std::string("c413:1 c414:+5"), std::string("c413:1 c414:"),
                            std::string("c413:1 "), std::string("c413:1  c414:2"),
                            std::string("c413:1 c4x4:2"), std::string("c413:1 c41:2"),
                            std::string("c413:1 c41ll:2"), std::string("c413:1 c41o:2"),
                            std::string("c413:1 c4 1:2"), std::string("c413:1 c41:1:2"),
                            std::string("c413:1 c414"), std::string("")}) {
    SeriesSum sum(buckets, kApr1 + 10);
    std::vector<Int128> want;
    Status want_status = plain(value, &want);
    Status got = sum.AddArchiveTotal(value);
    EXPECT_EQ(got.ok(), want_status.ok()) << value;
    if (!want_status.ok()) {
      EXPECT_EQ(got.message(), want_status.message()) << value;
    } else {
      EXPECT_EQ(sum.values(), want) << value;
    }
  }
}

TEST(SeriesSumTest, FirstHours) {
  EXPECT_EQ(FirstArchiveHour("c413:2 c41l:5").value(), 1333249200);
  EXPECT_EQ(FirstArchiveHour("").value(), INT64_MAX);
  EXPECT_EQ(FirstRealtimeHour("u|k.c413,1\nu|k.c41l,1\n", "u|k.", kApr1 - 1).value(), 1333249200);
  EXPECT_EQ(FirstRealtimeHour("u|k.c413,1\n", "u|k.", kApr1).value(), INT64_MAX);
}

TEST(SeriesSumTest, Json) {
  QueryParams q;
  q.ns = "u";
  q.key = "jehiah";
  q.units = 2;
  q.reference_ts = kRef;
  std::vector<Bucket> buckets = Days(kRef, 2);
  EXPECT_EQ(SeriesJson(q, buckets, {7, 0}, 7),
            R"({"ns":"u","key":"jehiah","unit":"day","units":2,"unit_reference_ts":1333314000,)"
            R"("tz_offset":0,"series":[{"dt":1333238400,"value":7},{"dt":1333152000,"value":0}]})");
  q.rollup = true;
  EXPECT_EQ(SeriesJson(q, buckets, {7, 0}, 7),
            R"({"ns":"u","key":"jehiah","unit":"day","units":2,"unit_reference_ts":1333314000,)"
            R"("tz_offset":0,"total":7})");
}

// docs/formats.md#counts: buckets and totals are exact 128-bit sums, written as plain
// integer literals; a sum that would leave 128 bits is named, never clamped.
TEST(SeriesSumTest, SumsPastInt64AreExactAndPast128BitsNamed) {
  std::vector<Bucket> buckets = Days(kRef, 2);
  SeriesSum sum(buckets, kApr1 - 1);
  ASSERT_TRUE(sum.AddArchiveTotal("c3ve:9223372036854775807 c3vf:9223372036854775807").ok());
  ASSERT_TRUE(sum.AddRealtime("u|k.c413,9223372036854775807\nu|k.c41l,18446744073709551616\n", "u|k.").ok());
  EXPECT_TRUE(sum.overflow().empty());
  EXPECT_EQ(sum.values(), (std::vector<Int128>{Int128{INT64_MAX} + (Int128{1} << 64), Int128{INT64_MAX} * 2}));
  Int128 total = 0;
  ASSERT_TRUE(sum.Total(&total));
  QueryParams q;
  q.ns = "u";
  q.key = "k";
  q.units = 2;
  q.reference_ts = kRef;
  EXPECT_EQ(SeriesJson(q, buckets, sum.values(), total),
            R"({"ns":"u","key":"k","unit":"day","units":2,"unit_reference_ts":1333314000,)"
            R"("tz_offset":0,"series":[{"dt":1333238400,"value":27670116110564327423},)"
            R"({"dt":1333152000,"value":18446744073709551614}]})");
  q.rollup = true;
  EXPECT_EQ(SeriesJson(q, buckets, sum.values(), total),
            R"({"ns":"u","key":"k","unit":"day","units":2,"unit_reference_ts":1333314000,)"
            R"("tz_offset":0,"total":46116860184273879037})");
  ASSERT_TRUE(sum.AddRealtime("u|k.c41l,170141183460469231731687303715884105727\n", "u|k.").ok());
  EXPECT_EQ(sum.overflow(), "1333238400");
  SeriesSum two(buckets, kApr1 - 1);
  ASSERT_TRUE(two.AddRealtime("u|k.c41l,170141183460469231731687303715884105727\n", "u|k.").ok());
  ASSERT_TRUE(two.AddArchiveTotal("c3vf:1").ok());
  EXPECT_TRUE(two.overflow().empty());
  EXPECT_FALSE(two.Total(&total));
}

TEST(BreakdownSumTest, SumsPastInt64AreExactAndPast128BitsNamed) {
  BreakdownSum sum(RangeOfBuckets(Days(kRef, 1)), kApr1 - 1);
  ASSERT_TRUE(sum.AddRealtimeSums("US,9223372036854775807\nJP,-5\n").ok());
  ASSERT_TRUE(sum.AddRealtimeSums("US,9223372036854775807\nJP,18446744073709551616\n").ok());
  std::vector<SubkeyCount> top = sum.Candidates(10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(Int128ToString(top[0].value), "18446744073709551614");
  EXPECT_EQ(Int128ToString(top[1].value), "18446744073709551611");
  std::vector<BreakdownEntry> entries =
      RankBreakdown(top, 10, [](std::string_view stored) { return std::string(stored); });
  QueryParams q;
  q.ns = "u";
  q.key = "k";
  q.sub = "c";
  q.reference_ts = kRef;
  const std::string json = BreakdownJson(q, entries);
  EXPECT_NE(json.find(R"("breakdown":[{"subkey":"US","value":18446744073709551614},)"
                      R"({"subkey":"JP","value":18446744073709551611}])"),
            std::string::npos)
      << json;
  EXPECT_TRUE(sum.overflow().empty());
  ASSERT_TRUE(sum.AddRealtimeSums("US,170141183460469231731687303715884105727\n").ok());
  EXPECT_EQ(sum.overflow(), "US");
}

// A realtime /fwsum answer: subkeys and their sums, added as they are (realtime kept to the
// hours asked); pages of one answer add up; anything else is a named error.
TEST(BreakdownSumTest, RealtimeSumsAddUp) {
  BreakdownSum sum(RangeOfBuckets(Days(kRef, 1)), kApr1 - 1);
  ASSERT_TRUE(sum.AddRealtimeSums("HMCJVIkxxP4=,3\nUS,2\n").ok());
  ASSERT_TRUE(sum.AddRealtimeSums("US,5\nzz,-1\n").ok());  // the next page: US continued
  std::vector<SubkeyCount> all = sum.Candidates(10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].stored, "US");
  EXPECT_TRUE(all[0].value == 7);
  EXPECT_TRUE(all[1].value == 3);
  EXPECT_TRUE(all[2].value == -1);
  for (const char* bad : {"US,x\n", ",3\n", "r.u|k.US.c41l,3\n", "US\n"}) {
    BreakdownSum s(RangeOfBuckets(Days(kRef, 1)), kApr1 - 1);
    EXPECT_FALSE(s.AddRealtimeSums(bad).ok()) << bad;
  }
}

TEST(BreakdownSumTest, SumsRanksAndShowsOriginals) {
  std::vector<Bucket> buckets = Days(kRef, 1);
  HourRange range = RangeOfBuckets(buckets);
  std::vector<std::string> keys;
  ASSERT_TRUE(ArchiveSubtotalKeys("c3uf:1 c413:2 c41l:5 c41m:1", range, kApr1, "r", "u", "jehiah", &keys).ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"r.u|jehiah.c413", "r.u|jehiah.c41l"}));
  ASSERT_TRUE(ArchiveSubtotalKeys("c413:2 c41l:5", range, kApr1 - 1, "r", "u", "jehiah", &keys).ok());
  EXPECT_TRUE(keys.empty());

  BreakdownSum sum(range, kApr1 - 1);
  ASSERT_TRUE(sum.AddArchive("r.u|jehiah.c3uf,HMCJVIkxxP4=:50\n", "r.u|jehiah.").ok());  // <= W but out of range
  ASSERT_TRUE(sum.AddRealtime("r.u|jehiah.HMCJVIkxxP4=.c41l,3\nr.u|jehiah.h0aMB8AuNw4=.c41l,2\n"
                              "r.u|jehiah.zero.c41l,0\nr.u|jehiah.b.c41l,2\nr.u|jehiah.a.c41m,2\n",
                              "r.u|jehiah.").ok());
  std::vector<SubkeyCount> top1 = sum.Candidates(1);
  ASSERT_EQ(top1.size(), 1u);
  EXPECT_EQ(top1[0].stored, "HMCJVIkxxP4=");
  // Second place is a tie of two: both are candidates.
  std::vector<SubkeyCount> top2 = sum.Candidates(2);
  ASSERT_EQ(top2.size(), 3u);
  auto shown = [](std::string_view s) {
    if (s == "HMCJVIkxxP4=") return std::string("http://twitter.com/");
    if (s == "h0aMB8AuNw4=") return std::string("http://www.facebook.com/");
    return std::string(s);
  };
  EXPECT_EQ(RankBreakdown(top2, 2, shown),
            (std::vector<BreakdownEntry>{{"http://twitter.com/", 3}, {"b", 2}}));
  EXPECT_EQ(RankBreakdown(sum.Candidates(100), 100, shown),
            (std::vector<BreakdownEntry>{{"http://twitter.com/", 3}, {"b", 2},
                                         {"http://www.facebook.com/", 2}}));
  EXPECT_FALSE(sum.AddRealtime("r.u|jehiah..c41l,3\n", "r.u|jehiah.").ok());
  BreakdownSum archived(range, kApr1);
  EXPECT_FALSE(archived.AddArchive("r.u|jehiah.c41l,US\n", "r.u|jehiah.").ok());
  EXPECT_FALSE(archived.AddArchive("r.u|jehiah.c41,US:1\n", "r.u|jehiah.").ok());
  ASSERT_TRUE(archived.AddArchive("r.u|jehiah.c41l,US:4 JP:1\n", "r.u|jehiah.").ok());
  EXPECT_EQ(RankBreakdown(archived.Candidates(5), 5, shown),
            (std::vector<BreakdownEntry>{{"US", 4}, {"JP", 1}}));
}

TEST(BreakdownSumTest, Json) {
  QueryParams q;
  q.kind = QueryKind::kBreakdown;
  q.ns = "u";
  q.key = "jehiah";
  q.sub = "c";
  q.units = 1;
  q.reference_ts = kRef;
  EXPECT_EQ(BreakdownJson(q, {{"US", 4}, {"JP", 1}}),
            R"({"ns":"u","key":"jehiah","unit":"day","units":1,"unit_reference_ts":1333314000,)"
            R"("tz_offset":0,"sub":"c","breakdown":[{"subkey":"US","value":4},{"subkey":"JP","value":1}]})");
}

}  // namespace
}  // namespace clickatron
