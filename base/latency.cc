#include "base/latency.h"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace clickatron {

int LatencyBucket(uint64_t micros) {
  if (micros < 16) return static_cast<int>(micros);
  int octave = 63 - __builtin_clzll(micros);  // >= 4
  int sub = static_cast<int>((micros >> (octave - 3)) & 7);
  int bucket = 16 + (octave - 4) * 8 + sub;
  return std::min(bucket, kLatencyBuckets - 1);
}

uint64_t LatencyBucketUpperBound(int bucket) {
  if (bucket < 16) return static_cast<uint64_t>(bucket);
  int octave = 4 + (bucket - 16) / 8;
  uint64_t sub = static_cast<uint64_t>((bucket - 16) % 8);
  uint64_t width = uint64_t{1} << (octave - 3);
  return (8 + sub) * width + width - 1;
}

void LatencySnapshot::Add(uint64_t micros) {
  ++counts_[LatencyBucket(micros)];
  ++count_;
  sum_ += micros;
  max_ = std::max(max_, micros);
}

void LatencySnapshot::Merge(const LatencySnapshot& other) {
  for (int i = 0; i < kLatencyBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

uint64_t LatencySnapshot::Quantile(double q) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int i = 0; i < kLatencyBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(LatencyBucketUpperBound(i), max_);
  }
  return max_;
}

LatencyHistogram::LatencyHistogram() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

void LatencyHistogram::Record(uint64_t micros, uint64_t count) {
  // One writer per histogram, so a plain load and store (no locked read-modify-write)
  // is enough; readers only need each word to be read whole.
  auto& bucket = counts_[LatencyBucket(micros)];
  bucket.store(bucket.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
  sum_.store(sum_.load(std::memory_order_relaxed) + micros * count, std::memory_order_relaxed);
  if (micros > max_.load(std::memory_order_relaxed)) {
    max_.store(micros, std::memory_order_relaxed);
  }
}

LatencySnapshot LatencyHistogram::Snapshot() const {
  LatencySnapshot s;
  for (int i = 0; i < kLatencyBuckets; ++i) {
    s.counts_[i] = counts_[i].load(std::memory_order_relaxed);
    s.count_ += s.counts_[i];
  }
  s.sum_ = sum_.load(std::memory_order_relaxed);
  s.max_ = max_.load(std::memory_order_relaxed);
  return s;
}

uint64_t MonotonicMicros() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace clickatron
