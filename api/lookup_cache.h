// LookupCache: an LRU map from a lookup hash (`h0aMB8AuNw4=`) to the original value it
// stands for, so hashed subkeys in /breakdown answers do not cost a lookup request each time.
//
// A hash names one original for good (docs/formats.md#keys-and-hashes: lookup records are written once and never
// change; a collision is reported by the rebuild, not overwritten), so entries never go
// stale; the cache only bounds memory, evicting the least recently used entry beyond
// `capacity`. Only found lookups are cached: an unknown hash may get its record later.
// Not thread-safe: one cache per event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace clickatron {

class LookupCache {
 public:
  explicit LookupCache(size_t capacity) : capacity_(capacity) {}
  LookupCache(const LookupCache&) = delete;
  LookupCache& operator=(const LookupCache&) = delete;

  // The original for hash, marking it most recently used; nullptr when absent. The pointer
  // is valid until the next Put().
  const std::string* Get(std::string_view hash);
  // Stores hash → original (replacing any entry), evicting the oldest beyond capacity.
  void Put(std::string_view hash, std::string original);

  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  using Entry = std::pair<std::string, std::string>;  // hash, original
  size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  // Keys are views of the hashes stored in order_'s nodes, which never move.
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace clickatron
