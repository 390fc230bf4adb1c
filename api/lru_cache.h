// LruCache: the one cache policy of the read path (docs/api-read.md#caches) — a map from a
// string key to a value, bounded by a number of entries and by bytes, evicting the least
// recently used entry first. Both bounds count: an entry is charged its key, the byte size
// its owner gives for the value, and kEntryOverhead for the map and list nodes, so the byte
// bound is close to what the cache makes the process hold.
//
// Used for lookup originals (lookup_cache.h, bounded by entries) and for archive answers
// (archive_cache.h, bounded by bytes). Values are only ever replaced whole; EraseIf drops
// what its owner knows to be stale (an archive generation replaced). Not thread-safe: one
// cache per event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace clickatron {

struct CacheLimits {
  size_t max_entries = SIZE_MAX;
  size_t max_bytes = SIZE_MAX;
};

template <typename Value>
class LruCache {
 public:
  static constexpr size_t kEntryOverhead = 96;

  explicit LruCache(CacheLimits limits) : limits_(limits) {}
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // The value for key, marking it most recently used; nullptr when absent (a miss). The
  // pointer is valid until the next Put() or EraseIf().
  const Value* Get(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->value;
  }

  // Stores key → value charged value_bytes (replacing any entry), then evicts the least
  // recently used entries until both bounds hold. An entry larger than the byte bound on its
  // own is not stored.
  void Put(std::string_view key, Value value, size_t value_bytes) {
    const size_t charge = key.size() + value_bytes + kEntryOverhead;
    if (limits_.max_entries == 0 || charge > limits_.max_bytes) return;
    auto it = index_.find(key);
    if (it != index_.end()) {
      bytes_ -= it->second->charge;
      it->second->value = std::move(value);
      it->second->charge = charge;
      bytes_ += charge;
      order_.splice(order_.begin(), order_, it->second);
    } else {
      order_.push_front(Entry{std::string(key), std::move(value), charge});
      index_.emplace(order_.front().key, order_.begin());
      bytes_ += charge;
    }
    while (index_.size() > limits_.max_entries || bytes_ > limits_.max_bytes) Evict(std::prev(order_.end()));
  }

  // Drops every entry for which drop(key, value) is true (not counted as evictions).
  template <typename Predicate>
  size_t EraseIf(Predicate drop) {
    size_t dropped = 0;
    for (auto it = order_.begin(); it != order_.end();) {
      auto next = std::next(it);
      if (drop(std::string_view(it->key), it->value)) {
        Remove(it);
        ++dropped;
      }
      it = next;
    }
    return dropped;
  }

  size_t size() const { return index_.size(); }
  size_t bytes() const { return bytes_; }
  const CacheLimits& limits() const { return limits_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Entry {
    std::string key;
    Value value;
    size_t charge;
  };
  using Iterator = typename std::list<Entry>::iterator;

  void Remove(Iterator it) {
    bytes_ -= it->charge;
    index_.erase(std::string_view(it->key));
    order_.erase(it);
  }
  void Evict(Iterator it) {
    ++evictions_;
    Remove(it);
  }

  CacheLimits limits_;
  std::list<Entry> order_;  // most recently used first
  // Keys are views of the keys stored in order_'s nodes, which never move.
  std::unordered_map<std::string_view, Iterator> index_;
  size_t bytes_ = 0;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace clickatron
