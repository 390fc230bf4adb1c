// LookupCache: a map from a lookup hash (`h0aMB8AuNw4=`) to the original value it stands
// for, so hashed subkeys in /breakdown answers do not cost a lookup request each time.
//
// A hash names one original for good (docs/formats.md#keys-and-hashes: lookup records are written once and never
// change; a collision is reported by the rebuild, not overwritten), so entries never go
// stale; the cache only bounds memory, evicting the least recently used entry beyond
// `capacity` entries — the read path's one cache policy (lru_cache.h), which the archive
// answer cache shares. Only found lookups are cached: an unknown hash may get its record
// later. Not thread-safe: one cache per event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/lru_cache.h"

namespace clickatron {

class LookupCache {
 public:
  explicit LookupCache(size_t capacity) : lru_(CacheLimits{capacity, SIZE_MAX}) {}
  LookupCache(const LookupCache&) = delete;
  LookupCache& operator=(const LookupCache&) = delete;

  // The original for hash, marking it most recently used; nullptr when absent. The pointer
  // is valid until the next Put().
  const std::string* Get(std::string_view hash) { return lru_.Get(hash); }
  // Stores hash → original (replacing any entry), evicting the oldest beyond capacity.
  void Put(std::string_view hash, std::string original) {
    const size_t bytes = original.size();
    lru_.Put(hash, std::move(original), bytes);
  }

  size_t size() const { return lru_.size(); }
  size_t bytes() const { return lru_.bytes(); }
  size_t capacity() const { return lru_.limits().max_entries; }
  uint64_t hits() const { return lru_.hits(); }
  uint64_t misses() const { return lru_.misses(); }
  uint64_t evictions() const { return lru_.evictions(); }

 private:
  LruCache<std::string> lru_;
};

}  // namespace clickatron
