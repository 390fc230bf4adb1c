// ArchiveCache: archive answers kept until the generation they were read under is replaced
// (docs/api-read.md#caches).
//
// An archive file never changes while it is served: a publish replaces it with a new
// generation, and every archive answer names the generation of the file that gave it
// (X-Archive-Generation, from the manifest). So an answer to a path, on a shard, under a
// generation is the answer for as long as that generation is served; the cache keys answers
// by (shard, generation, path) and bounds them by bytes (the read path's one cache policy,
// lru_cache.h).
//
// Which generation is served is learnt only from live answers. A shard's generation is
// "fresh" for confirm_us after a live answer named it (the lease, wire/generation.h):
// then a query's first archive request (a total record, a breakdown's index) is answered from
// the cache when it holds it, and the read plan may skip the archive for a range wholly after
// W. Otherwise that request goes to a replica — conditionally, when the cache holds its answer
// under the shard's last known generation (a 304 confirms it). The query's further requests
// are pinned to the generation it named, taken from the cache when it holds them. A live
// answer naming another generation drops every entry of the shard's other generations.
// Answers without a generation (a file without a manifest) are never cached.
//
// Bodies are shared, not copied: a hit hands the query the cached bytes (SharedBody).
// Not thread-safe: one cache per event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/lru_cache.h"

namespace clickatron {

// A backend answer's bytes, shared between the cache and the queries reading them. The view
// may be narrower than the bytes (a /get value without its '\n').
class SharedBody {
 public:
  SharedBody() = default;
  explicit SharedBody(std::string text)
      : data_(std::make_shared<const std::string>(std::move(text))), view_(*data_) {}

  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT: a body reads as its bytes
  size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  char back() const { return view_.back(); }
  void remove_suffix(size_t n) { view_.remove_suffix(n); }

 private:
  std::shared_ptr<const std::string> data_;
  std::string_view view_;
};

// What a cached archive answer keeps: everything a query reads from it.
struct CachedArchiveAnswer {
  int status = 0;
  SharedBody body;
  int64_t watermark = 0;
  bool more = false;     // X-Fwmatch-More
  bool rollups = false;  // X-Archive-Rollups
};

class ArchiveCache {
 public:
  ArchiveCache(size_t shards, size_t max_bytes, int64_t confirm_us)
      : lru_(CacheLimits{SIZE_MAX, max_bytes}), confirm_us_(confirm_us), shards_(shards) {}

  // The generation shard's answers may be taken from the cache at now_us, or nullptr.
  const std::string* FreshGeneration(size_t shard, int64_t now_us) const {
    const ShardState& st = shards_[shard];
    if (st.generation.empty() || now_us - st.confirmed_us > confirm_us_) return nullptr;
    return &st.generation;
  }

  // The generation the shard's last live answer named (however long ago), or nullptr.
  const std::string* KnownGeneration(size_t shard) const {
    const std::string& g = shards_[shard].generation;
    return g.empty() ? nullptr : &g;
  }

  // A live answer of shard named generation at now_us: it becomes the shard's, and entries
  // of the shard's other generations are dropped.
  void Confirm(size_t shard, std::string_view generation, int64_t now_us);

  // The answer to path under (shard, generation); nullptr on a miss.
  const CachedArchiveAnswer* Get(size_t shard, std::string_view generation, std::string_view path);
  void Put(size_t shard, std::string_view generation, std::string_view path, CachedArchiveAnswer answer);

  size_t entries() const { return lru_.size(); }
  size_t bytes() const { return lru_.bytes(); }
  size_t max_bytes() const { return lru_.limits().max_bytes; }
  uint64_t hits() const { return lru_.hits(); }
  uint64_t misses() const { return lru_.misses(); }
  uint64_t evictions() const { return lru_.evictions(); }
  uint64_t dropped() const { return dropped_; }  // entries of replaced generations
  uint64_t generation_changes() const { return generation_changes_; }

 private:
  struct ShardState {
    std::string generation;
    int64_t confirmed_us = 0;
  };
  // "<shard> <generation>\n<path>": generations hold no '\n'.
  std::string Key(size_t shard, std::string_view generation, std::string_view path) const;

  LruCache<CachedArchiveAnswer> lru_;
  int64_t confirm_us_;
  std::vector<ShardState> shards_;
  uint64_t dropped_ = 0, generation_changes_ = 0;
};

}  // namespace clickatron
