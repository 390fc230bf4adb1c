#include "rebuild/day_plan.h"

#include <gtest/gtest.h>

#include "keyformat/ymdh.h"

namespace clickatron::rebuild {
namespace {

constexpr Day D = 20000;  // 2024-10-04
constexpr HeldState kOpen = HeldState::kOpen, kClosed = HeldState::kClosed, kReleased = HeldState::kReleased;

std::string Text(Day d) { return FormatDay(d); }

MergedExports Parts(std::vector<std::tuple<Day, uint32_t, uint64_t>> parts) {
  MergedExports m;
  for (auto [day, shard, ring] : parts) m.parts.insert(DayPart{Text(day), shard, ring, 0x1234});
  return m;
}

std::vector<Day> Days(Day from, Day to) {
  std::vector<Day> out;
  for (Day d = from; d <= to; ++d) out.push_back(d);
  return out;
}

TEST(PlanNight, TheSteadyStateArchivesTheDayBeforeYesterdayAndNothingElse) {
  // Archived through D; each shard holds D (released), D+1 (closed by nothing yet: open),
  // D+2, D+3 open; tonight's last day is D+1.
  const ClusterView cluster = {{0xa, D, {{D, kReleased}, {Day(D + 1), kOpen}, {Day(D + 2), kOpen}}},
                               {0xb, D, {{Day(D + 1), kOpen}, {Day(D + 2), kOpen}}}};
  const NightPlan p = PlanNight(D + 1, D, D, Parts({{D, 0, 0xa}, {D, 1, 0xb}}), cluster);
  EXPECT_EQ(p.owned_through, D);
  EXPECT_TRUE(p.fence.empty());
  EXPECT_TRUE(p.parts.empty());
  EXPECT_EQ(p.new_days, Days(D + 1, D + 1));
}

TEST(PlanNight, BulkLoadedThroughYesterdayClosesAndAddsWhatRealtimeTookForIt) {
  // History imported and published through D (yesterday) while the shards, never told,
  // took increments for D: the night closes D on them and adds their part of it; tonight's
  // last day (D - 1) is already the archive's, so no new day.
  const ClusterView cluster = {{0xa, 0, {{D, kOpen}, {Day(D + 1), kOpen}}}, {0xb, 0, {{Day(D + 1), kOpen}}}};
  const NightPlan p = PlanNight(D - 1, D, D, MergedExports(), cluster);
  EXPECT_EQ(p.owned_through, D);
  EXPECT_EQ(p.fence, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(p.parts, (std::vector<DayShard>{{D, 0}}));
  EXPECT_TRUE(p.new_days.empty());
}

TEST(PlanNight, AnImportNotYetPublishedIsOwnedToo) {
  // The work directory holds history through D + 1, the live archive only through D - 5:
  // the next publish makes the archive own D + 1, so the fence and the parts go that far.
  const ClusterView cluster = {{0xa, Day(D - 5), {{Day(D + 1), kOpen}, {Day(D + 2), kOpen}}}};
  const NightPlan p = PlanNight(D, D - 5, D + 1, MergedExports(), cluster);
  EXPECT_EQ(p.owned_through, D + 1);
  EXPECT_EQ(p.fence, (std::vector<uint32_t>{0}));
  EXPECT_EQ(p.parts, (std::vector<DayShard>{{Day(D + 1), 0}}));
  EXPECT_TRUE(p.new_days.empty());
}

TEST(PlanNight, ADayClosedByHandWithoutItsExportIsAdded) {
  const ClusterView cluster = {{0xa, D, {{D, kClosed}}}, {0xb, D, {{D, kReleased}}}};
  const NightPlan p = PlanNight(D, D, D, Parts({{D, 1, 0xb}}), cluster);
  EXPECT_TRUE(p.fence.empty());
  EXPECT_EQ(p.parts, (std::vector<DayShard>{{D, 0}}));
}

TEST(PlanNight, AReplacementShardsDayIsNotThePredecessorsMergedOne) {
  // Shard 0 lost its disk: the new ring (0xc) took increments for D, which the archive holds
  // from the old ring (0xa). They are a part of their own; shard 1's is merged.
  const ClusterView cluster = {{0xc, 0, {{D, kOpen}}}, {0xb, D, {{D, kClosed}}}};
  const NightPlan p = PlanNight(D, D, D, Parts({{D, 0, 0xa}, {D, 1, 0xb}}), cluster);
  EXPECT_EQ(p.fence, (std::vector<uint32_t>{0}));
  EXPECT_EQ(p.parts, (std::vector<DayShard>{{D, 0}}));
}

TEST(PlanNight, ADayLineFromBeforeRingsHoldsEveryShard) {
  MergedExports legacy;
  legacy.days[Text(D)] = {1, 2};
  const ClusterView cluster = {{0xa, D, {{D, kClosed}}}, {0xb, D, {{D, kClosed}}}};
  EXPECT_TRUE(PlanNight(D, D, D, legacy, cluster).parts.empty());
  // ... unless the cluster has more shards than the line has digests.
  const ClusterView three = {{0xa, D, {{D, kClosed}}}, {0xb, D, {{D, kClosed}}}, {0xc, D, {}}};
  EXPECT_EQ(PlanNight(D, D, D, legacy, three).parts, (std::vector<DayShard>{{D, 0}, {D, 1}}));
}

TEST(PlanNight, AClockThatJumpedArchivesEveryDayFromTheOldestHeld) {
  // The archive is at D; the shards hold D+1..D+3 open and the clock says the night's last
  // day is D+6: every day D+1..D+6 is archived, the ones no shard holds as empty days.
  const ClusterView cluster = {{0xa, D, {{Day(D + 1), kOpen}, {Day(D + 2), kOpen}, {Day(D + 3), kOpen}}}};
  const NightPlan p = PlanNight(D + 6, D, D, MergedExports(), cluster);
  EXPECT_EQ(p.new_days, Days(D + 1, D + 6));
  // Days older than every held one were never written: the archive skips to the oldest held.
  const ClusterView later = {{0xa, D, {{Day(D + 4), kOpen}}}};
  EXPECT_EQ(PlanNight(D + 6, D, D, MergedExports(), later).new_days, Days(D + 4, D + 6));
}

TEST(PlanNight, NothingPublishedNothingHeld) {
  const ClusterView idle = {{0xa, 0, {}}, {0xb, 0, {}}};
  const NightPlan p = PlanNight(D, 0, 0, MergedExports(), idle);
  EXPECT_EQ(p.owned_through, 0);
  EXPECT_TRUE(p.fence.empty());
  EXPECT_TRUE(p.parts.empty());
  EXPECT_TRUE(p.new_days.empty());
  // A first night of a new cluster: from the oldest day held.
  const ClusterView first = {{0xa, 0, {{Day(D - 1), kOpen}, {D, kOpen}}}};
  EXPECT_EQ(PlanNight(D, 0, 0, MergedExports(), first).new_days, Days(D - 1, D));
}

TEST(UnmergedParts, HeldOpenOrClosedNotReleasedNotMerged) {
  const ClusterView cluster = {{0xa, D, {{Day(D - 2), kReleased}, {Day(D - 1), kClosed}, {D, kOpen}}},
                               {0xb, D, {{Day(D - 1), kClosed}, {Day(D + 1), kOpen}}}};
  EXPECT_EQ(UnmergedParts(D, Parts({{Day(D - 1), 1, 0xb}}), cluster),
            (std::vector<DayShard>{{Day(D - 1), 0}, {D, 0}}));
  EXPECT_EQ(UnmergedParts(D - 2, MergedExports(), cluster), std::vector<DayShard>());
}

TEST(PlanRelease, FreesOnlyClosedDaysTheLiveGenerationHoldsFromThatRing) {
  const ClusterView cluster = {{0xa, D, {{Day(D - 1), kClosed}, {D, kClosed}, {Day(D + 1), kOpen}}},
                               {0xb, Day(D - 1), {{Day(D - 1), kReleased}, {D, kOpen}}},
                               {0xc, D, {{D, kClosed}}}};
  const ReleasePlan p = PlanRelease(D, Parts({{Day(D - 1), 0, 0xa}, {D, 0, 0xa}, {D, 2, 0xd}}), cluster);
  EXPECT_EQ(p.release, (std::vector<DayShard>{{Day(D - 1), 0}, {D, 0}}));
  EXPECT_EQ(p.open, (std::vector<DayShard>{{D, 1}}));
  EXPECT_EQ(p.unmerged, (std::vector<DayShard>{{D, 2}}));  // merged from another ring
  EXPECT_EQ(FormatDayShards(p.release), Text(D - 1) + "@0, " + Text(D) + "@0");
}

}  // namespace
}  // namespace clickatron::rebuild
