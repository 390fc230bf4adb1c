// The read path's caches: LruCache's two bounds, and ArchiveCache's generations.
#include "api/archive_cache.h"

#include <gtest/gtest.h>

#include "api/lru_cache.h"

namespace clickatron {
namespace {

TEST(LruCacheTest, BoundedByBytes) {
  const size_t entry = LruCache<int>::kEntryOverhead;
  LruCache<int> cache(CacheLimits{SIZE_MAX, 3 * (entry + 11)});  // three 1-byte keys of 10 bytes
  cache.Put("a", 1, 10);
  cache.Put("b", 2, 10);
  cache.Put("c", 3, 10);
  EXPECT_EQ(cache.bytes(), 3 * (entry + 11));
  ASSERT_NE(cache.Get("a"), nullptr);  // b is now the oldest
  cache.Put("d", 4, 10);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(cache.evictions(), 1u);
  cache.Put("e", 5, entry + 21);  // charged two entries' worth: evicts two to fit
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_LE(cache.bytes(), 3 * (entry + 11));
  cache.Put("huge", 6, 10 * entry);  // larger than the bound alone: not stored, nothing evicted
  EXPECT_EQ(cache.Get("huge"), nullptr);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.EraseIf([](std::string_view key, int) { return key == "e"; }), 1u);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), entry + 11);
}

TEST(LruCacheTest, ReplacingChargesTheNewSize) {
  LruCache<int> cache(CacheLimits{});
  cache.Put("a", 1, 100);
  cache.Put("a", 2, 10);
  EXPECT_EQ(cache.bytes(), 1 + 10 + LruCache<int>::kEntryOverhead);
  EXPECT_EQ(*cache.Get("a"), 2);
}

CachedArchiveAnswer Answer(std::string body) {
  return CachedArchiveAnswer{200, SharedBody(std::move(body)), 15431, false, true};
}

TEST(ArchiveCacheTest, FreshOnlyWithinTheConfirmWindow) {
  ArchiveCache cache(2, 1 << 20, 1000);
  EXPECT_EQ(cache.FreshGeneration(0, 0), nullptr);  // never confirmed
  cache.Confirm(0, "g1", 5000);
  ASSERT_NE(cache.FreshGeneration(0, 5500), nullptr);
  EXPECT_EQ(*cache.FreshGeneration(0, 6000), "g1");
  EXPECT_EQ(cache.FreshGeneration(0, 6001), nullptr);
  EXPECT_EQ(cache.FreshGeneration(1, 5500), nullptr);  // per shard
}

TEST(ArchiveCacheTest, KeyedByShardGenerationAndPath) {
  ArchiveCache cache(2, 1 << 20, 1000);
  cache.Confirm(0, "g1", 0);
  cache.Confirm(1, "g1", 0);
  cache.Put(0, "g1", "/get?key=a", Answer("0a"));
  cache.Put(1, "g1", "/get?key=a", Answer("1a"));
  ASSERT_NE(cache.Get(0, "g1", "/get?key=a"), nullptr);
  EXPECT_EQ(cache.Get(0, "g1", "/get?key=a")->body.view(), "0a");
  EXPECT_EQ(cache.Get(1, "g1", "/get?key=a")->body.view(), "1a");
  EXPECT_EQ(cache.Get(0, "g2", "/get?key=a"), nullptr);
  EXPECT_EQ(cache.Get(0, "g1", "/get?key=b"), nullptr);
}

TEST(ArchiveCacheTest, ANewGenerationDropsTheShardsOthers) {
  ArchiveCache cache(2, 1 << 20, 1000);
  cache.Confirm(0, "g1", 0);
  cache.Put(0, "g1", "/get?key=a", Answer("old"));
  cache.Put(1, "g1", "/get?key=a", Answer("other shard"));
  cache.Confirm(0, "g1", 10);  // the same generation again: nothing dropped
  EXPECT_EQ(cache.entries(), 2u);
  SharedBody held = cache.Get(0, "g1", "/get?key=a")->body;  // a query still reading it
  cache.Confirm(0, "g2", 20);
  EXPECT_EQ(cache.Get(0, "g1", "/get?key=a"), nullptr);
  EXPECT_NE(cache.Get(1, "g1", "/get?key=a"), nullptr);  // shard 1 learns on its own
  EXPECT_EQ(cache.dropped(), 1u);
  EXPECT_EQ(cache.generation_changes(), 1u);
  EXPECT_EQ(held.view(), "old");  // the bytes live as long as a reader holds them
  EXPECT_EQ(*cache.FreshGeneration(0, 20), "g2");
}

TEST(ArchiveCacheTest, ZeroBytesCachesNothing) {
  ArchiveCache cache(1, 0, 1000);
  cache.Confirm(0, "g1", 0);
  cache.Put(0, "g1", "/get?key=a", Answer("x"));
  EXPECT_EQ(cache.entries(), 0u);
}

}  // namespace
}  // namespace clickatron
