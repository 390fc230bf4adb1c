#include "api/archive_cache.h"

namespace clickatron {

std::string ArchiveCache::Key(size_t shard, std::string_view generation, std::string_view path) const {
  std::string key = std::to_string(shard);
  key += ' ';
  key += generation;
  key += '\n';
  key += path;
  return key;
}

void ArchiveCache::Confirm(size_t shard, std::string_view generation, int64_t now_us) {
  ShardState& st = shards_[shard];
  st.confirmed_us = now_us;
  if (st.generation == generation) return;
  if (!st.generation.empty()) ++generation_changes_;
  st.generation = generation;
  const std::string shard_prefix = std::to_string(shard) + " ";
  const std::string keep = Key(shard, generation, "");
  dropped_ += lru_.EraseIf([&](std::string_view key, const CachedArchiveAnswer&) {
    return key.substr(0, shard_prefix.size()) == shard_prefix && key.substr(0, keep.size()) != keep;
  });
}

const CachedArchiveAnswer* ArchiveCache::Get(size_t shard, std::string_view generation, std::string_view path) {
  return lru_.Get(Key(shard, generation, path));
}

void ArchiveCache::Put(size_t shard, std::string_view generation, std::string_view path,
                       CachedArchiveAnswer answer) {
  const size_t bytes = answer.body.size();
  lru_.Put(Key(shard, generation, path), std::move(answer), bytes);
}

}  // namespace clickatron
