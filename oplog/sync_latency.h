// SyncLatency: a histogram of the oplog's sync latencies for /stats, cheap enough to record
// into after every fdatasync.
//
// Buckets are quarter-octaves of microseconds (a quantile is within 19% of the true value),
// from 1 us to 2^40 us. One thread records (the sync thread); any thread may read a
// quantile at any time (each bucket is an atomic word; a record racing a read may be
// missed by it). Recording allocates nothing and takes no lock.
#ifndef CLICKATRON_OPLOG_SYNC_LATENCY_H_
#define CLICKATRON_OPLOG_SYNC_LATENCY_H_

#include <array>
#include <atomic>
#include <cstdint>

namespace clickatron::oplog {

class SyncLatency {
 public:
  SyncLatency();
  SyncLatency(const SyncLatency&) = delete;
  SyncLatency& operator=(const SyncLatency&) = delete;

  // Records `count` values of `micros`. REQUIRES: one recording thread.
  void Record(uint64_t micros, uint64_t count = 1);

  uint64_t count() const;
  uint64_t max_micros() const { return max_.load(std::memory_order_relaxed); }
  // The upper bound of the bucket holding the q-quantile, capped at the maximum; 0 when
  // empty. REQUIRES: 0 <= q <= 1.
  uint64_t Quantile(double q) const;

 private:
  static constexpr int kBuckets = 4 * 41;
  std::array<std::atomic<uint64_t>, kBuckets> counts_;
  std::atomic<uint64_t> max_{0};
};

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_SYNC_LATENCY_H_
