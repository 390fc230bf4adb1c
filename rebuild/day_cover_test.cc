// PlanDayCover: what import and segment decide from the segments already there.
#include <gtest/gtest.h>

#include "keyformat/ymdh.h"
#include "rebuild/day_cover.h"

namespace clickatron::rebuild {
namespace {

Day D(const char* text) { return Day(*ParseDay(text)); }

const std::map<std::string, Cover> kCoverage = {
    {"2012-03-25", {"import-aa", "2012-03-25.1", "2012-03-25"}},
    {"2012-03-26", {"export-bb", "2012-03-26.2", "2012-03-26"}},
    {"2012-02-01", {"import-cc", "2012-02.3", "2012-02"}},  // folded into a month segment
    {"2012-02-02", {"import-cc", "2012-02.3", "2012-02"}},
};

TEST(DayCover, NewDaysAreNeitherMineNorTaken) {
  DayCoverPlan plan = PlanDayCover(kCoverage, {D("2012-03-27")}, "import-aa");
  EXPECT_FALSE(plan.all_mine);
  EXPECT_TRUE(plan.taken.empty());
  EXPECT_TRUE(plan.to_replace.empty());
  EXPECT_TRUE(plan.unreplaceable.ok());
}

TEST(DayCover, DaysOfTheSameSourceAreMine) {
  EXPECT_TRUE(PlanDayCover(kCoverage, {D("2012-03-25")}, "import-aa").all_mine);
  EXPECT_FALSE(PlanDayCover(kCoverage, {D("2012-03-25"), D("2012-03-27")}, "import-aa").all_mine);
  EXPECT_TRUE(PlanDayCover(kCoverage, {}, "import-aa").all_mine);  // nothing to cover
}

TEST(DayCover, DaysOfAnotherSourceAreTakenAndReplaceable) {
  DayCoverPlan plan = PlanDayCover(kCoverage, {D("2012-03-25"), D("2012-03-26"), D("2012-03-27")}, "import-aa");
  EXPECT_FALSE(plan.all_mine);
  ASSERT_EQ(plan.taken.size(), 1u);
  EXPECT_EQ(plan.taken[0].first, D("2012-03-26"));
  EXPECT_EQ(plan.taken[0].second.segment, "2012-03-26.2");
  EXPECT_EQ(plan.taken[0].second.source, "export-bb");
  EXPECT_EQ(plan.to_replace, (std::set<std::string>{"2012-03-26.2"}));
  EXPECT_TRUE(plan.unreplaceable.ok());
}

TEST(DayCover, ADayInAMonthSegmentCannotBeReplacedAlone) {
  DayCoverPlan plan = PlanDayCover(kCoverage, {D("2012-02-01"), D("2012-02-02")}, "import-zz");
  ASSERT_EQ(plan.taken.size(), 2u);
  EXPECT_EQ(plan.to_replace, (std::set<std::string>{"2012-02.3"}));  // one segment, once
  EXPECT_EQ(plan.unreplaceable.message(),
            "day 2012-02-01 is already in the compacted segment 2012-02.3; it cannot be replaced on its own");
}

TEST(DayCover, ASegmentOfLateDataCoversNoDayAndTakesNone) {
  SegmentInfo exported{"2012-03-25.1", "", "2012-03-25", 1, {{"2012-03-25", "export-bb"}}, {}, {}, {}};
  SegmentInfo late{"2012-03-25.2", "", "2012-03-25", 1, {}, {}, {LateRange{"10.0.0.1:8000", 1, 9}}, {}};
  const std::map<std::string, Cover> coverage = CoverageOf({exported, late});
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage.at("2012-03-25").segment, "2012-03-25.1");
  EXPECT_TRUE(PlanDayCover(coverage, {D("2012-03-25")}, "export-bb").all_mine);  // the re-run stays a no-op
  EXPECT_EQ(LastCoveredDay({late}), "");
  EXPECT_EQ(LateMarks({exported, late}), (std::map<std::string, uint64_t>{{"10.0.0.1:8000", 9}}));
}

}  // namespace
}  // namespace clickatron::rebuild
