#include "metrics/registry.h"

#include <gtest/gtest.h>

namespace clickatron::metrics {
namespace {

TEST(Registry, FamiliesKeepTheOrderOfTheirFirstSampleAndGatherTheirSamples) {
  Registry r;
  r.Add("a_total", "A.", Type::kCounter, {{"shard", "0"}}, 1);
  r.Add("b", "B.", Type::kGauge, {{"shard", "0"}}, 2);
  r.Add("a_total", "ignored: the first help stays", Type::kCounter, {{"shard", "1"}}, 3);
  ASSERT_EQ(r.families().size(), 2u);
  EXPECT_EQ(r.families()[0].name, "a_total");
  EXPECT_EQ(r.families()[0].help, "A.");
  ASSERT_EQ(r.families()[0].samples.size(), 2u);
  EXPECT_EQ(r.families()[0].samples[1].labels[0].value, "1");
  EXPECT_EQ(r.families()[0].samples[1].value, 3);
  EXPECT_EQ(r.families()[1].name, "b");
  EXPECT_TRUE(r.problems().empty());
}

TEST(Registry, MisuseDropsTheSampleAndSaysWhy) {
  Registry r;
  r.Add("x", "X.", Type::kGauge, {}, 1);
  r.Add("x", "X.", Type::kCounter, {}, 1);            // another type
  r.Add("x", "X.", Type::kGauge, {}, 2);              // the same series again
  r.Add("1x", "bad name", Type::kGauge, {}, 1);       // a name may not start with a digit
  r.Add("y", "Y.", Type::kGauge, {{"__name", "v"}}, 1);  // reserved label name
  r.Add("z", "Z.", Type::kGauge, {{"a-b", "v"}}, 1);     // not a label name
  r.Add("h", "H.", Type::kHistogram, {}, 1);            // a histogram takes AddHistogram
  LatencySnapshot s;
  r.AddHistogram("hh", "HH.", {{"le", "1"}}, s);         // le is the histogram's own
  ASSERT_EQ(r.problems().size(), 7u);
  EXPECT_EQ(r.problems()[0], "metric x is a gauge, not a counter");
  EXPECT_EQ(r.problems()[1], "metric x{} added twice");
  EXPECT_EQ(r.problems()[2], "metric name '1x' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
  EXPECT_EQ(r.problems()[3], "metric y: label name '__name' is not allowed");
  EXPECT_EQ(r.problems()[4], "metric z: label name 'a-b' is not allowed");
  EXPECT_EQ(r.problems()[5], "metric h: a histogram takes AddHistogram");
  EXPECT_EQ(r.problems()[6], "metric hh: label name 'le' is not allowed");
  ASSERT_EQ(r.families()[0].samples.size(), 1u);
  EXPECT_EQ(r.families()[0].samples[0].value, 1);
}

TEST(Registry, NamesAsTheFormatAllows) {
  EXPECT_TRUE(IsMetricName("clickatron_api:rate5m"));
  EXPECT_TRUE(IsMetricName("_x9"));
  EXPECT_FALSE(IsMetricName(""));
  EXPECT_FALSE(IsMetricName("9x"));
  EXPECT_FALSE(IsMetricName("a.b"));
  EXPECT_TRUE(IsLabelName("shard"));
  EXPECT_FALSE(IsLabelName("a:b"));
  EXPECT_FALSE(IsLabelName("__x"));
}

TEST(Registry, HistogramBoundsAreExactBucketBoundsOfTheSnapshot) {
  for (int i = 0; i < kHistogramBounds; i++) {
    const uint64_t bound = HistogramBound(i);
    EXPECT_EQ(LatencyBucketUpperBound(LatencyBucket(bound)), bound) << i;
    EXPECT_NE(LatencyBucket(bound), LatencyBucket(bound + 1)) << i;  // the next value is in the next bucket
  }
  EXPECT_EQ(HistogramBound(0), 7u);
  EXPECT_EQ(HistogramBound(kHistogramBounds - 1), (uint64_t{1} << 35) - 1);
}

TEST(Registry, HistogramCountsAreCumulativeAndExactAtEveryBound) {
  LatencySnapshot s;
  for (uint64_t v : std::initializer_list<uint64_t>{0, 7, 8, 15, 16, 1000, 1023, 1024, uint64_t{1} << 36}) s.Add(v);
  Registry r;
  r.AddHistogram("d_seconds", "D.", {{"path", "/get"}}, s);
  ASSERT_TRUE(r.problems().empty());
  const Sample& h = r.families()[0].samples[0];
  ASSERT_EQ(h.cumulative.size(), size_t(kHistogramBounds) + 1);
  EXPECT_EQ(h.cumulative[0], 2u);   // <= 7: 0, 7
  EXPECT_EQ(h.cumulative[1], 4u);   // <= 15: 8, 15
  EXPECT_EQ(h.cumulative[2], 5u);   // <= 31: 16
  EXPECT_EQ(h.cumulative[7], 7u);   // <= 1023: 1000, 1023
  EXPECT_EQ(h.cumulative[8], 8u);   // <= 2047: 1024
  EXPECT_EQ(h.cumulative[kHistogramBounds - 1], 8u);  // 2^36 only in +Inf
  EXPECT_EQ(h.cumulative.back(), 9u);
  EXPECT_DOUBLE_EQ(h.value, double(0 + 7 + 8 + 15 + 16 + 1000 + 1023 + 1024 + (uint64_t{1} << 36)) / 1e6);
}

}  // namespace
}  // namespace clickatron::metrics
