// IdempotencyIndex: the keyed `/incr` requests this API accepted within the window
// (docs/api-write.md#safe-retries), in memory: key → the digest of the request, when it was
// accepted, its answer (the events it counted) and its oplog record.
//
// An entry is in one of two states:
//   in flight  its record is appended and waits for the oplog sync: a retry waits with it;
//   stored     its record is durable: a retry with the same digest is answered from here.
// An in-flight entry whose record the oplog could not store is forgotten (Forget): nothing
// was counted, so a retry is a new request.
//
// The index is rebuilt from the oplog at start (idempotency_restore.h), so it holds no file of
// its own: the key rides in the record that counts the events (incr_payload.h), durable with
// them or not at all.
//
// Bounds. The window is 24 h (kIdempotencyWindowSeconds): an entry is kept while
// now < accepted_at + window, and dropped by Expire once it is stored and past it, oldest
// accepted first (a clock stepped back can keep an entry longer, never shorter). Memory is
// bounded by max_bytes: each entry is charged its key and kEntryOverhead (measured:
// docs/benchmarks.md#idempotency-index), and HasRoom says whether a new key fits — a full
// index refuses new keys (the server's 503 IDEMPOTENCY_INDEX_FULL) rather than forget keys
// within the window. Restore ignores the bound: what the oplog holds was accepted.
//
// Memory of its own. Entries, their keys and the map live in a pool (std::pmr) that takes
// large blocks from the heap and reuses what expiry frees: a day of keys held as hundreds of
// thousands of small blocks among the request path's would fragment the heap and make every
// request's malloc slower — measured 20-40 % more CPU a request without a key once 250,000
// keys were held (docs/benchmarks.md#idempotency-index). The pool never shrinks below its
// peak, which max_bytes bounds.
//
// Plain data on the API's event loop: not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory_resource>
#include <string_view>
#include <unordered_map>

#include "api/idempotency_key.h"

namespace clickatron {

inline constexpr int64_t kIdempotencyWindowSeconds = 24 * 3600;

class IdempotencyIndex {
 public:
  // The list and map nodes, the bucket and the key's rounding in the pool, per entry on
  // x86-64: measured 146-153 bytes beside the key, and the bucket array is twice its size
  // for a moment while it grows (docs/benchmarks.md#idempotency-index).
  static constexpr size_t kEntryOverhead = 192;

  enum class State : uint8_t { kInFlight, kStored };

  struct Entry {
    std::string_view key;     // the index's own copy once inserted
    RequestDigest digest;
    int64_t accepted_at = 0;  // unix seconds (base/wall_clock.h)
    uint64_t events = 0;      // the answer: {"accepted": events}
    uint64_t seq = 0;         // its oplog record
    State state = State::kInFlight;
  };

  explicit IdempotencyIndex(size_t max_bytes, int64_t window_seconds = kIdempotencyWindowSeconds)
      : max_bytes_(max_bytes), window_(window_seconds) {}
  ~IdempotencyIndex();
  IdempotencyIndex(const IdempotencyIndex&) = delete;
  IdempotencyIndex& operator=(const IdempotencyIndex&) = delete;

  // The entry for key, or nullptr. Valid until it is forgotten or expired.
  Entry* Find(std::string_view key);

  // True when an entry for a new key fits within max_bytes.
  bool HasRoom(std::string_view key) const { return bytes_ + Charge(key) <= max_bytes_; }

  // Adds an entry, copying its key. REQUIRES: Find(entry.key) == nullptr and HasRoom(entry.key).
  Entry* Insert(Entry entry);

  // Adds an entry read back from the oplog at start, whatever the bound; an entry for the same
  // key is replaced (the later record wins: the earlier one can only be expired by then).
  void Restore(Entry entry);

  // An in-flight entry's record is durable.
  void Stored(Entry* entry) { entry->state = State::kStored; }
  // An in-flight entry's record was not stored: drop it.
  void Forget(Entry* entry);

  // Drops the stored entries accepted at or before now - window, oldest first, stopping at the
  // first that is not (or is in flight). Returns how many it dropped.
  size_t Expire(int64_t now);

  int64_t window_seconds() const { return window_; }
  size_t size() const { return by_key_.size(); }
  size_t bytes() const { return bytes_; }
  size_t max_bytes() const { return max_bytes_; }
  uint64_t expired() const { return expired_; }

 private:
  using Order = std::pmr::list<Entry>;  // in the order entries were added: expiry order
  static size_t Charge(std::string_view key) { return key.size() + kEntryOverhead; }
  void Erase(Order::iterator it);

  const size_t max_bytes_;
  const int64_t window_;
  std::pmr::unsynchronized_pool_resource pool_;  // before the containers: it outlives them
  Order order_{&pool_};
  std::pmr::unordered_map<std::string_view, Order::iterator> by_key_{&pool_};  // views of the keys
  size_t bytes_ = 0;
  uint64_t expired_ = 0;
};

}  // namespace clickatron
