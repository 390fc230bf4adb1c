#include "api/lookup_cache.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(LookupCacheTest, GetsWhatWasPut) {
  LookupCache cache(4);
  EXPECT_EQ(cache.Get("h0aMB8AuNw4="), nullptr);
  cache.Put("h0aMB8AuNw4=", "http://www.facebook.com/");
  ASSERT_NE(cache.Get("h0aMB8AuNw4="), nullptr);
  EXPECT_EQ(*cache.Get("h0aMB8AuNw4="), "http://www.facebook.com/");
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 1u);
  cache.Put("h0aMB8AuNw4=", "replaced");
  EXPECT_EQ(*cache.Get("h0aMB8AuNw4="), "replaced");
  EXPECT_EQ(cache.size(), 1u);
}

TEST(LookupCacheTest, EvictsTheLeastRecentlyUsed) {
  LookupCache cache(2);
  cache.Put("a", "1");
  cache.Put("b", "2");
  ASSERT_NE(cache.Get("a"), nullptr);  // b is now the oldest
  cache.Put("c", "3");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(*cache.Get("a"), "1");
  EXPECT_EQ(*cache.Get("c"), "3");
  for (int i = 0; i < 1000; ++i) cache.Put(std::to_string(i), std::string(100, 'x'));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.Get("999"), nullptr);
  EXPECT_NE(cache.Get("998"), nullptr);
}

TEST(LookupCacheTest, ZeroCapacityCachesNothing) {
  LookupCache cache(0);
  cache.Put("a", "1");
  EXPECT_EQ(cache.Get("a"), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace clickatron
