#include "oplog/sync_latency.h"

#include <algorithm>
#include <cmath>

namespace clickatron::oplog {
namespace {

// Bucket 4*k + s holds values in [2^k * (4+s)/4, 2^k * (5+s)/4).
int Bucket(uint64_t micros, int buckets) {
  if (micros == 0) micros = 1;
  const int octave = 63 - __builtin_clzll(micros);
  const int sub = octave >= 2 ? static_cast<int>((micros >> (octave - 2)) & 3)
                              : static_cast<int>((micros << (2 - octave)) & 3);
  return std::min(4 * octave + sub, buckets - 1);
}

// The smallest value in a bucket; buckets of the first two octaves may be empty.
uint64_t LowerBound(int bucket) {
  const int octave = bucket / 4;
  const uint64_t sub = static_cast<uint64_t>(bucket % 4);
  return ((uint64_t{1} << octave) * (4 + sub) + 3) / 4;
}

uint64_t UpperBound(int bucket) { return LowerBound(bucket + 1) - 1; }

}  // namespace

SyncLatency::SyncLatency() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

void SyncLatency::Record(uint64_t micros, uint64_t count) {
  // One writer: a plain load and store is enough, readers only need whole words.
  auto& bucket = counts_[Bucket(micros, kBuckets)];
  bucket.store(bucket.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
  if (micros > max_.load(std::memory_order_relaxed)) max_.store(micros, std::memory_order_relaxed);
}

uint64_t SyncLatency::count() const {
  uint64_t n = 0;
  for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
  return n;
}

uint64_t SyncLatency::Quantile(double q) const {
  std::array<uint64_t, kBuckets> counts;
  uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) total += counts[i] = counts_[i].load(std::memory_order_relaxed);
  if (total == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  rank = std::clamp<uint64_t>(rank, 1, total);
  const uint64_t max = max_micros();
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return std::min(UpperBound(i), max);
  }
  return max;
}

}  // namespace clickatron::oplog
