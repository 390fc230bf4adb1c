#include "realtime/memtable.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace clickatron::realtime {
namespace {

std::string Keys(const std::vector<MemTable::Entry>& entries) {
  std::string out;
  for (const auto& e : entries) out.append(e.key).push_back(' ');
  return out;
}

TEST(MemTable, CountersSumLookupsReplaceMarksOnlyRise) {
  MemTable t;
  EXPECT_TRUE(t.empty());
  bool created = false;
  *t.AddCounter("u|a.c3p1", &created) += 5;
  EXPECT_TRUE(created);
  *t.AddCounter("u|a.c3p1", &created) -= 7;
  EXPECT_FALSE(created);
  EXPECT_EQ(*t.FindCounter("u|a.c3p1"), -2);
  EXPECT_EQ(t.FindCounter("u|b.c3p1"), nullptr);
  t.PutLookup("_l|h0aMB8AuNw4=", "old");
  t.PutLookup("_l|h0aMB8AuNw4=", "new");
  EXPECT_EQ(*t.FindLookup("_l|h0aMB8AuNw4="), "new");
  t.SetMark("api-1", 7);
  t.SetMark("api-1", 3);
  EXPECT_EQ(t.Mark("api-1"), 7);
  EXPECT_EQ(t.Mark("api-2"), -1);
  EXPECT_GT(t.bytes(), 0u);
  t.EraseCounter("u|a.c3p1");
  EXPECT_EQ(t.FindCounter("u|a.c3p1"), nullptr);
}

TEST(MemTable, PendingSumsMayPassInt64) {
  MemTable t;
  bool created;
  PendingDelta* d = t.AddCounter("u|a.c3p1", &created);
  *d += INT64_MAX;
  *d += INT64_MAX;  // stored may be near INT64_MIN: the value still fits
  t.NoteDelta(*d);
  EXPECT_TRUE(t.abs_bound() == Uint128{INT64_MAX} * 2);
}

TEST(MemTable, CollectIsSortedBoundedAndResumable) {
  MemTable t;
  bool created;
  for (const char* k : {"u|d", "u|b", "v|a", "u|a", "u|c"}) *t.AddCounter(k, &created) += 1;
  t.PutLookup("_l|x", "x");
  std::vector<MemTable::Entry> got;
  EXPECT_FALSE(t.Collect("", false, "", 100, &got));
  EXPECT_EQ(Keys(got), "_l|x u|a u|b u|c u|d v|a ");
  got.clear();
  EXPECT_TRUE(t.Collect("u|", false, "u|", 2, &got));  // two of four: more remain
  EXPECT_EQ(Keys(got), "u|a u|b ");
  got.clear();
  EXPECT_FALSE(t.Collect("u|b", true, "u|", 2, &got));  // strictly after u|b
  EXPECT_EQ(Keys(got), "u|c u|d ");
  EXPECT_EQ(Keys(t.Sorted()), "_l|x u|a u|b u|c u|d v|a ");
}

TEST(MemTable, AbsorbOlderPutsNewerWritesOnTop) {
  MemTable older, newer;
  bool created;
  *older.AddCounter("u|a", &created) += 5;
  *newer.AddCounter("u|a", &created) += 2;
  *older.AddCounter("u|b", &created) += 1;
  older.PutLookup("_l|x", "old");
  newer.PutLookup("_l|x", "new");
  older.PutLookup("_l|y", "only-old");
  older.SetMark("api-1", 9);
  newer.SetMark("api-1", 10);
  older.SetMark("api-2", 4);
  newer.AbsorbOlder(&older);
  EXPECT_TRUE(older.empty());
  EXPECT_EQ(*newer.FindCounter("u|a"), 7);
  EXPECT_EQ(*newer.FindCounter("u|b"), 1);
  EXPECT_EQ(*newer.FindLookup("_l|x"), "new");
  EXPECT_EQ(*newer.FindLookup("_l|y"), "only-old");
  EXPECT_EQ(newer.Mark("api-1"), 10);
  EXPECT_EQ(newer.Mark("api-2"), 4);
}

}  // namespace
}  // namespace clickatron::realtime
