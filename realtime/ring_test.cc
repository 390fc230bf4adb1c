#include "realtime/ring.h"

#include <gtest/gtest.h>

#include "realtime/ring_fixture.h"

namespace clickatron::realtime {
namespace {

using RingTest = RingFixture;

TEST_F(RingTest, ThreeDaysLiveSideBySide) {
  std::string body;
  for (int d = 0; d < 3; ++d) body += Key("a", kDay + d) + "," + std::to_string(d + 1) + "\n";
  WriteOutcome o = Incr(body, "api-1", 1);
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(o.applied, 3u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(Get(Key("a", kDay + d)), std::to_string(d + 1));
    EXPECT_EQ(ring_->SlotHolding(kDay + d)->state(), SlotState::kOpen);
  }
  EXPECT_EQ(Get(Key("a", kDay + 3)), "<absent>");  // same slot as kDay, other day
}

TEST_F(RingTest, NotReleasedThenReleaseThenReuse) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 1).ok());
  WriteOutcome o = Incr(Key("a", kDay + 3) + ",1\n" + Key("b", kDay + 1) + ",1\n", "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kNotReleased);
  EXPECT_EQ(o.message, "cannot take 2012-03-28: slot 1 holds 2012-03-25 (open), not released yet");
  EXPECT_EQ(Get(Key("b", kDay + 1)), "<absent>");  // nothing of the batch applied
  EXPECT_EQ(ring_->SlotHolding(kDay + 1), nullptr);

  EXPECT_EQ(ring_->Release(kDay + 3).refusal, Refusal::kInvalid);  // not held: 404
  ASSERT_TRUE(ring_->Release(kDay).ok());
  ASSERT_TRUE(ring_->Release(kDay).ok());  // idempotent
  EXPECT_EQ(Get(Key("a", kDay)), "5");     // released data stays readable until reuse
  o = Incr(Key("a", kDay + 3) + ",1\n", "api-1", 2);
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(Get(Key("a", kDay + 3)), "1");
  EXPECT_EQ(Get(Key("a", kDay)), "<absent>");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 2);

  o = Incr(Key("a", kDay) + ",1\n", "api-1", 3);
  EXPECT_EQ(o.refusal, Refusal::kExpired);
  EXPECT_EQ(o.message, "day 2012-03-25 has expired: slot 1 holds 2012-03-28 (open)");
}

TEST_F(RingTest, TwoDaysOfOneSlotInOneBatchAreRefused) {
  WriteOutcome o = Incr(Key("a", kDay + 3) + ",1\n" + Key("a", kDay) + ",1\n", "api-1", 1);
  EXPECT_EQ(o.refusal, Refusal::kExpired);
  EXPECT_EQ(o.message, "line 2: day 2012-03-25 has expired: day 2012-03-28 of the same batch takes its slot");
  EXPECT_EQ(ring_->slot(1).state(), SlotState::kEmpty);
}

TEST_F(RingTest, DuplicateSeqIsSkippedPerSlot) {
  std::string body = Key("a", kDay) + ",5\n" + Key("a", kDay + 1) + ",7\n";
  ASSERT_EQ(Incr(body, "api-1", 10).applied, 2u);
  WriteOutcome o = Incr(body, "api-1", 10);
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(o.applied, 0u);
  EXPECT_EQ(o.duplicate, 2u);
  o = Incr(body, "api-1", 9);
  EXPECT_EQ(o.duplicate, 2u);
  o = Incr(body, "api-2", 1);  // another source has its own marks
  EXPECT_EQ(o.applied, 2u);
  // A batch whose lines reach a slot that has not seen seq yet applies there only:
  // the state after a crash between two slots' commits.
  o = Incr(body + Key("a", kDay + 2) + ",1\n", "api-1", 10);
  EXPECT_EQ(o.applied, 1u);
  EXPECT_EQ(o.duplicate, 2u);
  EXPECT_EQ(Get(Key("a", kDay)), "10");
  EXPECT_EQ(Get(Key("a", kDay + 1)), "14");
  EXPECT_EQ(Get(Key("a", kDay + 2)), "1");
}

TEST_F(RingTest, OverflowAnywhereUndoesTheWholeBatch) {
  ASSERT_TRUE(Incr(Key("z", kDay + 1) + ",9223372036854775800\n", "api-1", 1).ok());
  std::string body = Key("a", kDay) + ",5\n" + Key("b", kDay + 1) + ",3\n" + Key("a", kDay) + ",2\n" +
                     Key("z", kDay + 1) + ",8\n";
  WriteOutcome o = Incr(body, "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kOverflow);
  EXPECT_EQ(o.message, "line 4: counter '" + Key("z", kDay + 1) + "' would overflow int64 adding 8");
  EXPECT_EQ(Get(Key("a", kDay)), "<absent>");
  EXPECT_EQ(Get(Key("b", kDay + 1)), "<absent>");
  EXPECT_EQ(Get(Key("z", kDay + 1)), "9223372036854775800");
  EXPECT_EQ(ring_->Mark(1, "api-1"), -1);
  EXPECT_EQ(ring_->Mark(2, "api-1"), 1);
}

TEST_F(RingTest, SyncedWritesSurviveReopen) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 1).ok());
  ASSERT_TRUE(ring_->Sync().ok());
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 2).ok());
  Reopen();  // a clean close commits
  EXPECT_EQ(Get(Key("a", kDay)), "10");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 2);
}

TEST_F(RingTest, LookupsNewestDayWinsAndFwmatchMerges) {
  std::vector<LookupLine> lookups;
  ASSERT_TRUE(ParseLookupBatch("_l|h0aMB8AuNw4=,old\n_l|AAAAAAAAAAA=,x\n", &lookups).ok());
  ASSERT_TRUE(ring_->SetLookups(kDay, lookups).ok());
  ASSERT_TRUE(ParseLookupBatch("_l|h0aMB8AuNw4=,new\n", &lookups).ok());
  ASSERT_TRUE(ring_->SetLookups(kDay + 1, lookups).ok());
  EXPECT_EQ(Get("_l|h0aMB8AuNw4="), "new");
  ASSERT_TRUE(Incr(Key("b", kDay + 1) + ",2\n" + Key("a", kDay) + ",1\n" + Key("c", kDay + 2) + ",3\n" +
                       Key("ab", kDay) + ",4\n",
                   "api-1", 1)
                  .ok());
  std::string out;
  bool more = true;
  EXPECT_EQ(ring_->Fwmatch("_l|", "", 100, &out, &more), 2u);
  EXPECT_EQ(out, "_l|AAAAAAAAAAA=,x\n_l|h0aMB8AuNw4=,new\n");
  EXPECT_FALSE(more);
  out.clear();
  EXPECT_EQ(ring_->Fwmatch("u|", "", 100, &out, &more), 4u);
  EXPECT_EQ(out, Key("a", kDay) + ",1\n" + Key("ab", kDay) + ",4\n" + Key("b", kDay + 1) + ",2\n" +
                     Key("c", kDay + 2) + ",3\n");
  EXPECT_FALSE(more);
  out.clear();
  EXPECT_EQ(ring_->Fwmatch("", "", 3, &out, &more), 3u);
  EXPECT_EQ(out, "_l|AAAAAAAAAAA=,x\n_l|h0aMB8AuNw4=,new\n" + Key("a", kDay) + ",1\n");
  EXPECT_TRUE(more);
  out.clear();
  EXPECT_EQ(ring_->Fwmatch("#", "", 10, &out, &more), 0u);  // metadata is never visible
  EXPECT_FALSE(more);
  EXPECT_EQ(ring_->Records(1), 4u);
}

// Pages of one record each, across three slots (file and pending), walk the prefix exactly
// once; `more` is false only on the page that reaches the end, even when it is full.
TEST_F(RingTest, FwmatchPagesAfterTheLastKeyToTheEnd) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",1\n" + Key("c", kDay + 2) + ",3\n", "api-1", 1).ok());
  ASSERT_TRUE(ring_->Sync().ok());
  ASSERT_TRUE(Incr(Key("b", kDay + 1) + ",2\n" + Key("d", kDay) + ",4\n", "api-1", 2).ok());
  std::string all;
  std::string after;
  bool more = true;
  int pages = 0;
  while (more) {
    std::string out;
    ASSERT_EQ(ring_->Fwmatch("u|", after, 1, &out, &more), 1u);
    all += out;
    after = out.substr(0, out.find(','));
    ++pages;
  }
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(all, Key("a", kDay) + ",1\n" + Key("b", kDay + 1) + ",2\n" + Key("c", kDay + 2) + ",3\n" +
                     Key("d", kDay) + ",4\n");
  std::string out;
  EXPECT_EQ(ring_->Fwmatch("u|", after, 1, &out, &more), 0u);  // after the last: nothing
  EXPECT_FALSE(more);
  EXPECT_EQ(ring_->Fwmatch("u|", "a", 10, &out, &more), 4u);  // before the prefix: from its start
}

}  // namespace
}  // namespace clickatron::realtime
