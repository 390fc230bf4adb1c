#include "base/latency.h"

#include <gtest/gtest.h>

#include <thread>

namespace clickatron {
namespace {

TEST(Latency, BucketsAreContiguousAndWithinAnEighth) {
  uint64_t previous_bound = 0;
  for (int b = 0; b < kLatencyBuckets; ++b) {
    uint64_t bound = LatencyBucketUpperBound(b);
    if (b > 0) {
      EXPECT_GT(bound, previous_bound);
      EXPECT_EQ(LatencyBucket(previous_bound + 1), b);
    }
    EXPECT_EQ(LatencyBucket(bound), b);
    previous_bound = bound;
  }
  for (uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 100ull, 999ull, 123456ull, 1ull << 39}) {
    uint64_t bound = LatencyBucketUpperBound(LatencyBucket(v));
    EXPECT_GE(bound, v);
    EXPECT_LE(bound, v + v / 8) << v;
  }
  EXPECT_EQ(LatencyBucket(~0ull), kLatencyBuckets - 1);
}

TEST(Latency, Quantiles) {
  LatencySnapshot s;
  EXPECT_EQ(s.Quantile(0.5), 0u);
  for (uint64_t v = 1; v <= 1000; ++v) s.Add(v);
  EXPECT_EQ(s.count(), 1000u);
  EXPECT_EQ(s.max_micros(), 1000u);
  EXPECT_EQ(s.sum_micros(), 500500u);
  // p50 = 500 lies in [480, 511]: the bucket bound is 511.
  EXPECT_EQ(s.Quantile(0.5), 511u);
  EXPECT_EQ(s.Quantile(0.99), 1000u);  // bucket bound 1023, capped at the max seen
  EXPECT_EQ(s.Quantile(0.0), 1u);
  EXPECT_EQ(s.Quantile(1.0), 1000u);
}

TEST(Latency, HistogramSnapshotsFromAnotherThreadAndMerges) {
  LatencyHistogram a;
  LatencyHistogram b;
  std::thread writer([&] {
    for (int i = 0; i < 100000; ++i) a.Record(10);
  });
  for (int i = 0; i < 100; ++i) {
    LatencySnapshot s = a.Snapshot();
    EXPECT_LE(s.count(), 100000u);
  }
  writer.join();
  for (int i = 0; i < 10; ++i) b.Record(5000);
  LatencySnapshot merged = a.Snapshot();
  merged.Merge(b.Snapshot());
  EXPECT_EQ(merged.count(), 100010u);
  EXPECT_EQ(merged.Quantile(0.5), 10u);
  EXPECT_EQ(merged.Quantile(0.9999), 10u);  // rank 100000 of 100010
  EXPECT_EQ(merged.Quantile(0.99995), 5000u);
  EXPECT_EQ(merged.max_micros(), 5000u);
  EXPECT_EQ(merged.sum_micros(), 100000u * 10 + 50000u);
}

// What the oplog's /stats relies on (it had a coarser histogram of its own before).
TEST(Latency, QuantilesAreWithinABucket) {
  LatencyHistogram h;
  EXPECT_EQ(h.Snapshot().Quantile(0.99), 0u);
  for (uint64_t v = 1; v <= 1000; ++v) h.Record(v);
  const LatencySnapshot s = h.Snapshot();
  EXPECT_EQ(s.count(), 1000u);
  EXPECT_EQ(s.max_micros(), 1000u);
  const uint64_t p50 = s.Quantile(0.5), p99 = s.Quantile(0.99);
  EXPECT_GE(p50, 500u);
  EXPECT_LE(p50, 500u * 5 / 4);
  EXPECT_GE(p99, 990u);
  EXPECT_LE(p99, 1000u);
  EXPECT_EQ(s.Quantile(0), 1u);
}

TEST(Latency, RecordManyAtOnce) {
  LatencyHistogram h;
  h.Record(7, 3);
  h.Record(40);
  const LatencySnapshot s = h.Snapshot();
  EXPECT_EQ(s.count(), 4u);
  EXPECT_EQ(s.sum_micros(), 3u * 7 + 40);
  EXPECT_EQ(s.Quantile(0.75), 7u);
  EXPECT_EQ(s.Quantile(1.0), 40u);  // bucket bound 43, capped at the max seen
}

}  // namespace
}  // namespace clickatron
