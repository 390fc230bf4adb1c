// Latency recording for /stats: a log-bucketed histogram that is cheap to record into and
// can be read from another thread, and a plain snapshot that merges and answers quantiles.
// The one histogram of every component: the servers' per-route latencies (net/), the
// oplog's fdatasync and durability latencies, the realtime fsync thread's, the API's
// delivery lag.
//
// Buckets: values 0..15 microseconds exactly, then 8 buckets per power of two (each bucket
// spans 1/8 of its octave, so a reported quantile is within 12.5% of the true value), up
// to 2^40 us (~12.7 days); larger values land in the last bucket. 304 buckets in all.
//
// Threading: one thread records into a LatencyHistogram (each server loop has its own, the
// oplog's sync thread its own, so recording is a relaxed atomic increment on a cache line nobody else writes); any thread
// may Snapshot() it at any time and gets a consistent-enough view (each bucket is read
// atomically; a record that races with the snapshot may be missed). Snapshots of several
// histograms (one per thread) Merge() into the endpoint's total.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace clickatron {

inline constexpr int kLatencyBuckets = 16 + 36 * 8;

// Bucket index of a value in microseconds, and the largest value a bucket holds.
int LatencyBucket(uint64_t micros);
uint64_t LatencyBucketUpperBound(int bucket);

class LatencySnapshot {
 public:
  LatencySnapshot() { counts_.fill(0); }

  void Add(uint64_t micros);  // records one value (for building snapshots directly)
  void Merge(const LatencySnapshot& other);

  uint64_t count() const { return count_; }
  uint64_t sum_micros() const { return sum_; }
  uint64_t max_micros() const { return max_; }
  // The values in bucket i (LatencyBucket); for exporting the whole histogram
  // (metrics/registry.h). REQUIRES: 0 <= i < kLatencyBuckets.
  uint64_t bucket(int i) const { return counts_[static_cast<size_t>(i)]; }
  // The smallest bucket bound b such that at least q of the values are <= b, capped at the
  // largest value recorded; 0 for an empty snapshot. REQUIRES: 0 <= q <= 1.
  uint64_t Quantile(double q) const;

 private:
  friend class LatencyHistogram;
  std::array<uint64_t, kLatencyBuckets> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
};

class LatencyHistogram {
 public:
  LatencyHistogram();
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Records `count` values of `micros` (a group commit makes every record in it durable
  // after the same wait). REQUIRES: called by one thread at a time (the owner); lock-free,
  // no allocation.
  void Record(uint64_t micros, uint64_t count = 1);
  // Any thread.
  LatencySnapshot Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kLatencyBuckets> counts_;
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

// Microseconds from a monotonic clock, for timing a request or a sync.
uint64_t MonotonicMicros();

}  // namespace clickatron
