#include "realtime/slot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/test_dir.h"

namespace clickatron::realtime {
namespace {

std::unique_ptr<Slot> OpenSlot(const std::string& path) {
  Result<std::unique_ptr<Slot>> s = Slot::Open(1, path, SlotOptions{});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::string GetValue(const Slot& slot, std::string_view key) {
  std::string v;
  return slot.Get(key, &v) ? v : "<absent>";
}

TEST(Slot, NewSlotIsEmpty) {
  TestDir dir;
  auto slot = OpenSlot(dir.path() + "/s.tcb");
  EXPECT_EQ(slot->state(), SlotState::kEmpty);
  EXPECT_EQ(slot->day(), kNoDay);
  EXPECT_EQ(slot->records(), 0u);
}

TEST(Slot, CountersLookupsMarksAndMetadataStayHidden) {
  TestDir dir;
  auto slot = OpenSlot(dir.path() + "/s.tcb");
  ASSERT_TRUE(slot->Reset(20000).ok());
  EXPECT_EQ(slot->state(), SlotState::kOpen);
  bool overflow = true;
  ASSERT_TRUE(slot->Add("u|a.c3p1", 5, &overflow).ok());
  EXPECT_FALSE(overflow);
  ASSERT_TRUE(slot->Add("u|a.c3p1", -7, &overflow).ok());
  ASSERT_TRUE(slot->PutLookup("_l|h0aMB8AuNw4=", "http://www.facebook.com/").ok());
  ASSERT_TRUE(slot->SetMark("api-1", 42).ok());
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "-2");
  EXPECT_EQ(GetValue(*slot, "_l|h0aMB8AuNw4="), "http://www.facebook.com/");
  EXPECT_EQ(GetValue(*slot, "#day"), "<absent>");
  EXPECT_EQ(slot->Mark("api-1"), 42);
  EXPECT_EQ(slot->Mark("api-2"), -1);
  EXPECT_EQ(slot->records(), 2u);

  SlotCursor c(*slot);
  std::string seen;
  for (c.Seek(""); c.Valid(); c.Next()) {
    seen.append(c.key()).push_back(',');
    c.AppendValue(&seen);
    seen.push_back('\n');
  }
  EXPECT_EQ(seen, "_l|h0aMB8AuNw4=,http://www.facebook.com/\nu|a.c3p1,-2\n");
}

TEST(Slot, CountersWidenPastInt64AndUndoRemovesNewCounters) {
  TestDir dir;
  auto slot = OpenSlot(dir.path() + "/s.tcb");
  ASSERT_TRUE(slot->Reset(20000).ok());
  bool overflow = false;
  ASSERT_TRUE(slot->Add("u|a.c3p1", INT64_MAX, &overflow).ok());
  ASSERT_TRUE(slot->Add("u|a.c3p1", 1, &overflow).ok());
  EXPECT_FALSE(overflow);
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "9223372036854775808");
  ASSERT_TRUE(slot->Undo("u|a.c3p1", 1).ok());  // back to 8 bytes
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "9223372036854775807");
  ASSERT_TRUE(slot->Add("u|b.c3p1", INT64_MIN, &overflow).ok());
  EXPECT_FALSE(overflow);
  ASSERT_TRUE(slot->Undo("u|b.c3p1", INT64_MIN).ok());
  EXPECT_EQ(GetValue(*slot, "u|b.c3p1"), "<absent>");
  EXPECT_EQ(slot->records(), 1u);
}

TEST(Slot, CommittedStateSurvivesReopenAndUncommittedDoesNot) {
  TestDir dir;
  const std::string path = dir.path() + "/s.tcb";
  {
    auto slot = OpenSlot(path);
    ASSERT_TRUE(slot->Reset(20000).ok());
    bool overflow;
    ASSERT_TRUE(slot->Add("u|a.c3p1", 3, &overflow).ok());
    ASSERT_TRUE(slot->SetMark("api-1", 7).ok());
    ASSERT_TRUE(slot->Commit().ok());
    ASSERT_TRUE(slot->Add("u|a.c3p1", 100, &overflow).ok());
    ASSERT_TRUE(slot->SetMark("api-1", 8).ok());
    ASSERT_TRUE(slot->Abort().ok());  // as if the process died before the next sync
    EXPECT_EQ(slot->Mark("api-1"), 7);
    EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "3");
    ASSERT_TRUE(slot->MarkClosed().ok());
    ASSERT_TRUE(slot->Release().ok());
  }
  auto slot = OpenSlot(path);
  EXPECT_EQ(slot->day(), 20000);
  EXPECT_EQ(slot->state(), SlotState::kReleased);
  EXPECT_EQ(slot->Mark("api-1"), 7);
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "3");
}

TEST(Slot, ClosedStateIsPersistedAndOnlyAClosedDayIsReleased) {
  TestDir dir;
  const std::string path = dir.path() + "/s.tcb";
  {
    auto slot = OpenSlot(path);
    ASSERT_TRUE(slot->Reset(20000).ok());
    ASSERT_TRUE(slot->SetMark("api-1", 7).ok());
    Status s = slot->Release();
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.message(), path + ": 2024-10-04 is not closed");
    EXPECT_EQ(slot->state(), SlotState::kOpen);
    ASSERT_TRUE(slot->MarkClosed().ok());
    ASSERT_TRUE(slot->MarkClosed().ok());  // idempotent
    EXPECT_EQ(slot->state(), SlotState::kClosed);
  }
  {
    auto slot = OpenSlot(path);
    EXPECT_EQ(slot->day(), 20000);
    EXPECT_EQ(slot->state(), SlotState::kClosed);
    EXPECT_EQ(slot->Mark("api-1"), 7);
    ASSERT_TRUE(slot->Release().ok());
    ASSERT_TRUE(slot->MarkClosed().ok());  // a released day stays released
    EXPECT_EQ(slot->state(), SlotState::kReleased);
  }
  auto slot = OpenSlot(path);
  EXPECT_EQ(slot->state(), SlotState::kReleased);
}

TEST(Slot, ResetWipesRecordsAndMarksAndLeftoverIsIgnored) {
  TestDir dir;
  const std::string path = dir.path() + "/s.tcb";
  {
    auto slot = OpenSlot(path);
    ASSERT_TRUE(slot->Reset(20000).ok());
    bool overflow;
    ASSERT_TRUE(slot->Add("u|a.c3p1", 3, &overflow).ok());
    ASSERT_TRUE(slot->SetMark("api-1", 7).ok());
    ASSERT_TRUE(slot->MarkClosed().ok());
    ASSERT_TRUE(slot->Release().ok());
  }
  // A reset that died before its rename leaves "<path>.new"; the old day stays.
  {
    FILE* f = std::fopen((path + ".new").c_str(), "w");
    std::fputs("half-written", f);
    std::fclose(f);
  }
  auto slot = OpenSlot(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".new"));
  EXPECT_EQ(slot->day(), 20000);
  EXPECT_EQ(slot->state(), SlotState::kReleased);
  ASSERT_TRUE(slot->Reset(20003).ok());
  EXPECT_EQ(slot->day(), 20003);
  EXPECT_EQ(slot->state(), SlotState::kOpen);
  EXPECT_EQ(slot->Mark("api-1"), -1);
  EXPECT_EQ(slot->records(), 0u);
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "<absent>");
}

TEST(Slot, ApplyWritesATableAtomicallyWithItsMarksAndBound) {
  TestDir dir;
  const std::string path = dir.path() + "/s.tcb";
  {
    auto slot = OpenSlot(path);
    ASSERT_TRUE(slot->Reset(20000).ok());
    MemTable t;
    bool created;
    *t.AddCounter("u|a.c3p1", &created) += 5;
    *t.AddCounter("u|b.c3p1", &created) += -9;
    *t.AddCounter("u|z.c3p1", &created) += 0;  // touched: a record at 0
    t.PutLookup("_l|h0aMB8AuNw4=", "http://www.facebook.com/");
    t.SetMark("api-1", 3);
    ASSERT_TRUE(slot->Apply(t).ok());
    EXPECT_FALSE(slot->pending());
    EXPECT_TRUE(slot->abs_max() == 9u);
    EXPECT_EQ(slot->records(), 4u);

    MemTable big;
    *big.AddCounter("u|a.c3p1", &created) += 1;
    *big.AddCounter("u|c.c3p1", &created) += INT64_MAX;
    big.SetMark("api-1", 4);
    ASSERT_TRUE(slot->Apply(big).ok());
    EXPECT_TRUE(slot->abs_max() == uint64_t{INT64_MAX});
    MemTable wide;
    *wide.AddCounter("u|c.c3p1", &created) += kInt128Max - INT64_MAX;  // 16 bytes from here
    *wide.AddCounter("u|d.c3p1", &created) += kInt128Min;               // a new record of 16 bytes
    ASSERT_TRUE(slot->Apply(wide).ok());
    EXPECT_TRUE(slot->abs_max() == Uint128(1) << 127);
    // A table that cannot apply (a sum leaving 128 bits) changes nothing, marks included.
    MemTable worse;
    *worse.AddCounter("u|a.c3p1", &created) += 1;
    *worse.AddCounter("u|c.c3p1", &created) += 1;
    worse.SetMark("api-1", 5);
    EXPECT_FALSE(slot->Apply(worse).ok());
    EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "6");
  }
  auto slot = OpenSlot(path);
  EXPECT_EQ(slot->Mark("api-1"), 4);
  EXPECT_TRUE(slot->abs_max() == Uint128(1) << 127);  // 2^127 - 1 as text, 2^127 read back
  EXPECT_EQ(GetValue(*slot, "u|a.c3p1"), "6");
  EXPECT_EQ(GetValue(*slot, "u|b.c3p1"), "-9");
  EXPECT_EQ(GetValue(*slot, "u|z.c3p1"), "0");
  EXPECT_EQ(GetValue(*slot, "u|c.c3p1"), "170141183460469231731687303715884105727");
  EXPECT_EQ(GetValue(*slot, "u|d.c3p1"), "-170141183460469231731687303715884105728");
  Int128 v = 0;
  EXPECT_TRUE(slot->ReadCounter("u|b.c3p1", &v));
  EXPECT_TRUE(v == -9);
  EXPECT_TRUE(slot->ReadCounter("u|d.c3p1", &v));
  EXPECT_TRUE(v == kInt128Min);
  EXPECT_FALSE(slot->ReadCounter("_l|h0aMB8AuNw4=", &v));
  EXPECT_TRUE(slot->Has("_l|h0aMB8AuNw4="));
  EXPECT_FALSE(slot->Has("#day"));
}

// docs/realtime.md#storage: 8 bytes while a value fits int64, 16 once it leaves it; both
// read back, so files written before 16-byte values existed stay valid.
TEST(Slot, CounterValuesAreEightOrSixteenBytes) {
  Int128 v = 0;
  const int64_t narrow = -5;
  EXPECT_TRUE(DecodeCounter(std::string_view(reinterpret_cast<const char*>(&narrow), 8), &v));
  EXPECT_TRUE(v == -5);
  const Int128 wide = kInt128Min + 3;
  EXPECT_TRUE(DecodeCounter(std::string_view(reinterpret_cast<const char*>(&wide), 16), &v));
  EXPECT_TRUE(v == wide);
  EXPECT_FALSE(DecodeCounter(std::string_view("1234", 4), &v));
  EXPECT_FALSE(DecodeCounter(std::string_view(), &v));
  TestDir dir;
  auto slot = OpenSlot(dir.path() + "/s.tcb");
  ASSERT_TRUE(slot->Reset(20000).ok());
  MemTable t;
  bool created;
  *t.AddCounter("u|a.c3p1", &created) += INT64_MAX;
  *t.AddCounter("u|b.c3p1", &created) += Int128{INT64_MAX} + 1;
  *t.AddCounter("u|c.c3p1", &created) += INT64_MIN;
  *t.AddCounter("u|d.c3p1", &created) += Int128{INT64_MIN} - 1;
  ASSERT_TRUE(slot->Apply(t).ok());
  SlotCursor c(*slot);
  std::string seen;
  for (c.Seek(""); c.Valid(); c.Next()) {
    seen += std::string(c.key()) + "=" + std::to_string(c.stored_value().size()) + ":";
    c.AppendValue(&seen);
    seen += "\n";
  }
  EXPECT_EQ(seen,
            "u|a.c3p1=8:9223372036854775807\nu|b.c3p1=16:9223372036854775808\n"
            "u|c.c3p1=8:-9223372036854775808\nu|d.c3p1=16:-9223372036854775809\n");
}

}  // namespace
}  // namespace clickatron::realtime
