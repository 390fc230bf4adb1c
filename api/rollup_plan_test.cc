// Rollup planning (rollup_plan.h): the periods of tokens, and the property that a breakdown
// planned with month and day rollups sums exactly what the hour-only plan sums — over random
// data, random ranges in zones with DST changes, random watermarks and archives that lack
// some or all rollup records.
#include "api/rollup_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "api/buckets.h"
#include "api/query_breakdown.h"
#include "keyformat/records.h"
#include "keyformat/rollup_hours.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

constexpr int64_t kJan2012 = 1325376000;  // 2012-01-01 00:00 UTC

int64_t At(const char* token) { return DecodeYmdh(token).value(); }

TEST(PeriodOfTokenTest, HourDayMonth) {
  EXPECT_EQ(PeriodOfToken("c41a")->start, At("c41a"));
  EXPECT_EQ(PeriodOfToken("c41a")->end, At("c41b"));
  EXPECT_EQ(PeriodOfToken("c41")->start, At("c410"));
  EXPECT_EQ(PeriodOfToken("c41")->end, At("c420"));
  EXPECT_EQ(PeriodOfToken("c4")->start, At("c410"));
  EXPECT_EQ(PeriodOfToken("c4")->end, At("c510"));
  EXPECT_EQ(PeriodOfToken("cc")->end, At("d110"));  // December ends with the next year
  EXPECT_EQ(PeriodOfToken("c2")->end - PeriodOfToken("c2")->start, 29 * kSecondsPerDay);  // 2012 leap
  EXPECT_EQ(PeriodOfToken("vc")->end, kYmdhMaxTs + 1);
  EXPECT_FALSE(PeriodOfToken("c").ok());
  EXPECT_FALSE(PeriodOfToken("c41a0").ok());
  EXPECT_FALSE(PeriodOfToken("cd").ok());   // month 13
  EXPECT_FALSE(PeriodOfToken("c2u").ok());  // 2012-02-30
  EXPECT_EQ(PeriodOfToken("c2u").status().message(),
            "time token 'c2u' is not a UTC hour, day or month (time token 'c2u0' is not YMDH: "
            "2012-2-30 is not a date)");
}

TEST(RollupPlanTest, WholeMonthsDaysAndEdgeHours) {
  // Hours at 2012-03-31 23:00, every day of April at noon, 2012-05-01 00:00 and 05:00.
  std::string total = "c3vn:1";
  for (int d = 1; d <= 30; ++d) total += std::string(" c4") + kYmdhAlphabet[d] + "c:1";
  total += " c510:1 c515:1";
  HourRange range{At("c3vn"), At("c515")};  // 05:00 on May 1st is outside
  std::vector<PlannedRecord> plan;
  ASSERT_TRUE(PlanSubtotalRecords(total, range, /*w=*/100000, true, &plan).ok());
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].token, "c3vn");  // the day is only partly inside
  EXPECT_FALSE(plan[0].rollup());
  EXPECT_TRUE(plan[0].fallback_columns.empty());
  EXPECT_EQ(plan[1].token, "c4");
  EXPECT_EQ(FallbackHours(plan[1]).size(), 30u);
  EXPECT_EQ(FallbackHours(plan[1]).front(), "c41c");
  EXPECT_EQ(FallbackHours(plan[1]).back(), "c4uc");
  EXPECT_EQ(plan[2].token, "c510");
  // The watermark at April 10th: days up to it, hours never past it.
  const int64_t apr10 = At("c4a0") / kSecondsPerDay;
  ASSERT_TRUE(PlanSubtotalRecords(total, range, apr10, true, &plan).ok());
  ASSERT_EQ(plan.size(), 11u);
  EXPECT_EQ(plan[1].token, "c41");
  EXPECT_EQ(plan[10].token, "c4a");
  // A missing rollup falls back to its hours, and only its own.
  std::unordered_set<std::string_view> found = {"c41", "c42", "c43", "c44", "c45", "c46", "c47", "c48", "c49"};
  EXPECT_EQ(FallbackKeys(plan, found, "c.u|k."), std::vector<std::string>{"c.u|k.c4ac"});
  // Hour-only: the plain index hours.
  ASSERT_TRUE(PlanSubtotalRecords(total, range, 100000, false, &plan).ok());
  EXPECT_EQ(plan.size(), 32u);
}

// ---- the property: rollup-planned == hour-only, over random cases ----

TEST(RollupPlanTest, ARollupStandsForItsHoursOnlyWhenItsMaskIsInsideTheIndex) {
  // The index: hours 20 and 21 of 2012-04-01, hour 0 of 2012-04-02.
  const std::string total = "c41k:3 c41l:5 c420:1";
  const int64_t w = At("c510") / kSecondsPerDay + 10;
  std::vector<PlannedRecord> plan;
  ASSERT_TRUE(PlanSubtotalRecords(total, HourRange{At("c410"), At("c420")}, w, true, &plan).ok());
  ASSERT_EQ(plan.size(), 1u);
  const PlannedRecord day = plan[0];
  ASSERT_EQ(day.token, "c41");
  EXPECT_EQ(day.index_hours[1], 3145728u);
  EXPECT_TRUE(RollupUsable(day, ".1:3145728 JP:3 US:5"));   // hours 20 and 21
  EXPECT_TRUE(RollupUsable(day, ".1:1048576 US:3"));        // 20 only: 21 has no subtotal record
  EXPECT_FALSE(RollupUsable(day, ".1:3145729 JP:4 US:5"));  // and hour 0, whose total nets to 0
  EXPECT_FALSE(RollupUsable(day, "JP:3 US:5"));             // no mask: a file of an older merge
  EXPECT_FALSE(RollupUsable(day, ".2:1 US:5"));             // a mask of another day
  EXPECT_FALSE(RollupUsable(day, ".1:0 US:5"));
  ASSERT_TRUE(PlanSubtotalRecords(total, HourRange{At("c410"), At("c510")}, w, true, &plan).ok());
  ASSERT_EQ(plan.size(), 1u);
  const PlannedRecord month = plan[0];
  ASSERT_EQ(month.token, "c4");
  EXPECT_TRUE(RollupUsable(month, ".1:3145728 .2:1 US:9"));
  EXPECT_FALSE(RollupUsable(month, ".1:3145728 .2:3 US:9"));
  EXPECT_FALSE(RollupUsable(month, ".1:3145728 .3:1 US:9"));
  EXPECT_FALSE(RollupUsable(PlannedRecord{"c41k", "", {}}, ".1:1048576 US:3"));  // an hour is no rollup

  // CollectTokens: hours as they come, rollups only when they may stand for their hours.
  plan = {month, day, PlannedRecord{"c41k", "", {}}};
  const std::string body =
      "c.u|jehiah.c4,.1:3145728 .2:3 US:9\n"
      "c.u|jehiah.c41,.1:3145728 JP:3 US:5\n"
      "c.u|jehiah.c41k,US:3\n"
      "c.u|jehiah.c42,.2:3 US:1\n";  // not planned
  std::unordered_set<std::string_view> found;
  CollectTokens(body, "c.u|jehiah.", plan, &found);
  EXPECT_EQ(found, (std::unordered_set<std::string_view>{"c41", "c41k"}));
  EXPECT_EQ(FallbackKeys(plan, found, "c.u|jehiah."),
            (std::vector<std::string>{"c.u|jehiah.c41k", "c.u|jehiah.c41l", "c.u|jehiah.c420"}));
}

struct Dataset {
  std::string total;                          // the index: `ymdh:n` columns
  std::map<std::string, std::string> records;  // archive subtotal records, key -> value
  int64_t first_hour = 0, last_hour = 0;
};

constexpr std::string_view kPrefix = "c.u|jehiah.";

std::string ColumnsOf(const std::map<std::string, int64_t>& sums) {
  std::string v;
  for (const auto& [name, n] : sums) {
    if (!v.empty()) v += ' ';
    v += name + ":" + std::to_string(n);
  }
  return v;
}

// Random hours over up to 250 days from a random start; each hour with data has 1-3 of 8
// subkeys. Some hours (in some datasets) have subtotal records but no total column (their
// total nets to 0: the hour path never reads them), some a total column but no subtotal
// record (their increments carried no subtotal). Rollups, summed from the subtotal records
// as the merge sums them and carrying the mask of their hours (keyformat/rollup_hours.h):
// all written, none, each one dropped with probability 1/4, or all without a mask (a file
// of an older merge).
Dataset MakeDataset(std::mt19937_64& rng, int* unindexed) {
  static const char* kSubkeys[] = {"a", "b", "c", "d", "h0aMB8AuNw4=", "x", "y", "zz"};
  Dataset d;
  const int64_t span_days = 1 + static_cast<int64_t>(rng() % 250);
  const int64_t start = kJan2012 + static_cast<int64_t>(rng() % (15 * 365)) * kSecondsPerDay +
                        static_cast<int64_t>(rng() % 24) * kSecondsPerHour;
  const double density[] = {0.01, 0.1, 0.6, 1.0};
  std::bernoulli_distribution has_data(density[rng() % 4]);
  const double odd[] = {0, 0, 0.01, 0.1};
  std::bernoulli_distribution no_total(odd[rng() % 4]), no_subtotal(odd[rng() % 4]);
  std::map<std::string, std::map<std::string, int64_t>> days, months;
  std::map<std::string, RollupHours> masks;
  d.first_hour = INT64_MAX;
  for (int64_t h = start; h < start + span_days * kSecondsPerDay && h <= kYmdhMaxTs; h += kSecondsPerHour) {
    if (!has_data(rng)) continue;
    std::string token(EncodeYmdh(h)->view());
    std::map<std::string, int64_t> hour;
    int64_t sum = 0;
    for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) {
      int64_t count = 1 + static_cast<int64_t>(rng() % 1000);
      hour[kSubkeys[rng() % 8]] += count;
      sum += count;
    }
    const bool indexed = !no_total(rng);
    if (!indexed || !no_subtotal(rng)) {
      for (const auto& [name, n] : hour) {
        days[token.substr(0, 3)][name] += n;
        months[token.substr(0, 2)][name] += n;
      }
      MarkRollupHour(token, &masks[token.substr(0, 3)]);
      MarkRollupHour(token, &masks[token.substr(0, 2)]);
      d.records[std::string(kPrefix) + token] = ColumnsOf(hour);
    }
    if (!indexed) {
      ++*unindexed;
      continue;
    }
    if (!d.total.empty()) d.total += ' ';
    d.total += token + ":" + std::to_string(sum);
    d.first_hour = std::min(d.first_hour, h);
    d.last_hour = h;
  }
  const int mode = static_cast<int>(rng() % 4);  // 0 all rollups, 1 none, 2 some, 3 no masks
  for (auto* periods : {&days, &months}) {
    for (const auto& [token, sums] : *periods) {
      if (mode == 1 || (mode == 2 && rng() % 4 == 0)) continue;
      std::string value;
      if (mode != 3) AppendRollupMasks(&value, 0, masks[token]);
      if (!value.empty()) value += ' ';
      d.records[std::string(kPrefix) + token] = value + ColumnsOf(sums);
    }
  }
  return d;
}

// An archive /mget: the `key,value` lines of the keys it has.
std::string Mget(const Dataset& d, const std::vector<std::string>& keys) {
  std::string body;
  for (const std::string& key : keys) {
    auto it = d.records.find(key);
    if (it != d.records.end()) body += key + "," + it->second + "\n";
  }
  return body;
}

std::map<std::string, int64_t> Sums(const BreakdownSum& sum) {
  std::map<std::string, int64_t> out;
  for (const SubkeyCount& c : sum.Candidates(1000)) out[std::string(c.stored)] = c.value;
  return out;
}

TEST(RollupPlanTest, RollupPlanSumsWhatHoursSum) {
  // Zones: DST in both hemispheres and at different local hours; Lord Howe (30-minute DST)
  // and Kolkata (+5:30) have edges off whole UTC hours and are refused by MakeBuckets.
  const char* kZones[] = {"UTC", "America/New_York", "Europe/London", "Australia/Sydney",
                          "America/Sao_Paulo", "Pacific/Auckland", "Australia/Lord_Howe",
                          "Asia/Kolkata", "-8", "+13"};
  std::vector<TimeZone> zones;
  for (const char* z : kZones) zones.push_back(TimeZone::Parse(z).value());
  const Unit kUnits[] = {Unit::kHour, Unit::kDay, Unit::kWeek, Unit::kMweek, Unit::kMonth};
  const int64_t kMaxUnits[] = {2000, 450, 70, 70, 16};

  std::mt19937_64 rng(20261125);
  int cases = 0, refused = 0, with_fallback = 0, unindexed = 0, rejected = 0, unchecked_differs = 0;
  size_t hour_records = 0, rollup_records = 0, months = 0, days = 0;
  while (cases < 10000) {
    const Dataset d = MakeDataset(rng, &unindexed);
    if (d.total.empty()) continue;
    for (int r = 0; r < 20; ++r) {
      const size_t u = rng() % 5;
      const size_t z = rng() % zones.size();
      const int64_t ref = d.first_hour - 20 * kSecondsPerDay +
                          static_cast<int64_t>(rng() % static_cast<uint64_t>(
                              d.last_hour - d.first_hour + 40 * kSecondsPerDay));
      const int64_t units = 1 + static_cast<int64_t>(rng() % kMaxUnits[u]);
      Result<std::vector<Bucket>> buckets = MakeBuckets(kUnits[u], zones[z], ref, units);
      if (!buckets.ok()) {
        ++refused;
        continue;
      }
      const HourRange range = RangeOfBuckets(buckets.value());
      // W: before, inside or after the data (kNoArchiveDays: nothing archived).
      const int64_t w = rng() % 8 == 0 ? kNoArchiveDays
                                       : (d.first_hour / kSecondsPerDay) - 5 +
                                             static_cast<int64_t>(rng() % static_cast<uint64_t>(
                                                 (d.last_hour - d.first_hour) / kSecondsPerDay + 10));

      std::vector<std::string> hour_keys;
      ASSERT_TRUE(ArchiveSubtotalKeys(d.total, range, w, "c", "u", "jehiah", &hour_keys).ok());
      // The sums keep views into the bodies: they live as long as the sums.
      const std::string hour_body = Mget(d, hour_keys);
      BreakdownSum by_hours(range, w);
      ASSERT_TRUE(by_hours.AddArchive(hour_body, kPrefix).ok());

      std::vector<PlannedRecord> plan;
      ASSERT_TRUE(PlanSubtotalRecords(d.total, range, w, false, &plan).ok());
      ASSERT_EQ(PlannedKeys(plan, kPrefix), hour_keys);  // the hour-only plan is today's
      ASSERT_TRUE(PlanSubtotalRecords(d.total, range, w, true, &plan).ok());
      const std::string first = Mget(d, PlannedKeys(plan, kPrefix));
      std::unordered_set<std::string_view> found;
      CollectTokens(first, kPrefix, plan, &found);
      const std::vector<std::string> fallback = FallbackKeys(plan, found, kPrefix);
      const std::string second = Mget(d, fallback);
      BreakdownSum by_rollups(range, w, &found);
      ASSERT_TRUE(by_rollups.AddArchive(first, kPrefix).ok());
      ASSERT_TRUE(by_rollups.AddArchive(second, kPrefix).ok());

      // Every rollup the archive has, summed without looking at its mask against the index:
      // where an hour has subtotals but no total column, the answer is another.
      std::unordered_set<std::string_view> every;
      LineWalker lines(first);
      std::string_view key, value;
      bool masked = true;
      while (lines.Next(&key, &value)) {
        const std::string_view token = key.substr(kPrefix.size());
        if (token.size() == kYmdhSize) continue;
        every.insert(token);
        masked &= !value.empty() && value[0] == kRollupMaskMark;
        rejected += found.count(token) ? 0 : 1;
      }
      if (masked) {
        const std::string every_second = Mget(d, FallbackKeys(plan, every, kPrefix));
        BreakdownSum unchecked(range, w, &every);
        ASSERT_TRUE(unchecked.AddArchive(first, kPrefix).ok());
        ASSERT_TRUE(unchecked.AddArchive(every_second, kPrefix).ok());
        unchecked_differs += Sums(unchecked) != Sums(by_hours);
      }

      ASSERT_EQ(Sums(by_rollups), Sums(by_hours))
          << "case " << cases << ": zone " << kZones[z] << " unit " << UnitName(kUnits[u]) << " units "
          << units << " ref " << ref << " w " << w;
      ++cases;
      with_fallback += fallback.empty() ? 0 : 1;
      if (fallback.empty()) {  // what rollups save where the archive has them all
        hour_records += hour_keys.size();
        rollup_records += plan.size();
      }
      for (const PlannedRecord& p : plan) {
        months += p.token.size() == kMonthTokenSize;
        days += p.token.size() == kDayTokenSize;
      }
    }
  }
  // The cases exercised what they are meant to: refused zones, month and day records,
  // archives lacking rollups, hours with subtotals but no total column, rollups whose mask
  // was refused (no mask, or an hour the index lacks) — and without the mask check the
  // answers would have differed.
  EXPECT_GT(refused, 500);
  EXPECT_GT(unindexed, 1000);
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(unchecked_differs, 100);
  EXPECT_GT(months, 1000u);
  EXPECT_GT(days, 10000u);
  EXPECT_GT(with_fallback, 1000);
  EXPECT_LT(rollup_records * 3, hour_records);
  std::printf("%d cases (%d ranges refused); where no rollup was missing: %zu hour records, %zu with "
              "rollups; %zu month and %zu day records planned; %d cases fell back to hours; %d "
              "rollups refused by their mask; %d cases would differ without the check (%d hours "
              "not indexed)\n",
              cases, refused, hour_records, rollup_records, months, days, with_fallback, rejected,
              unchecked_differs, unindexed);
}

}  // namespace
}  // namespace clickatron
