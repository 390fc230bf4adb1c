#include "realtime/ring.h"

#include <gtest/gtest.h>

#include <cstdio>

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

TEST_F(RingTest, NotReleasedThenCloseReleaseThenReuse) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 1).ok());
  WriteOutcome o = Incr(Key("a", kDay + 3) + ",1\n" + Key("b", kDay + 1) + ",1\n", "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kNotReleased);
  EXPECT_EQ(o.message, "cannot take 2012-03-28: slot 1 holds 2012-03-25 (open), not released yet");
  EXPECT_EQ(Get(Key("b", kDay + 1)), "<absent>");  // nothing of the batch applied
  EXPECT_EQ(ring_->SlotHolding(kDay + 1), nullptr);

  EXPECT_EQ(ring_->Release(kDay + 3).refusal, Refusal::kInvalid);  // not held: 404
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  EXPECT_EQ(closed_now, 1);
  o = Incr(Key("a", kDay + 3) + ",1\n", "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kNotReleased);  // closed is not released yet
  EXPECT_EQ(o.message, "cannot take 2012-03-28: slot 1 holds 2012-03-25 (closed), not released yet");
  ASSERT_TRUE(ring_->Release(kDay).ok());
  ASSERT_TRUE(ring_->Release(kDay).ok());  // idempotent
  EXPECT_EQ(Get(Key("a", kDay)), "5");     // released data stays readable until reuse
  o = Incr(Key("a", kDay + 3) + ",1\n", "api-1", 2);
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(Get(Key("a", kDay + 3)), "1");
  EXPECT_EQ(Get(Key("a", kDay)), "<absent>");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 2);

  o = Incr(Key("a", kDay) + ",1\n", "api-1", 3);
  EXPECT_EQ(o.refusal, Refusal::kClosed);  // closed wins over expired
  EXPECT_EQ(o.message, "day 2012-03-25 is closed: the shard is closed through 2012-03-25");
  o = Incr(Key("a", kDay + 1) + ",1\n" + Key("a", kDay - 1) + ",1\n", "api-1", 3);
  EXPECT_EQ(o.refusal, Refusal::kClosed);
  EXPECT_EQ(o.message, "day 2012-03-24 is closed: the shard is closed through 2012-03-25");
  EXPECT_EQ(Get(Key("a", kDay + 1)), "<absent>");
  EXPECT_EQ(ring_->slot(2).state(), SlotState::kEmpty);
}

TEST_F(RingTest, ReleaseOfAnOpenDayIsRefused) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 1).ok());
  WriteOutcome o = ring_->Release(kDay);
  EXPECT_EQ(o.refusal, Refusal::kNotClosed);
  EXPECT_EQ(RefusalHttpCode(o.refusal), 409);
  EXPECT_EQ(RefusalStatusText(o.refusal), "DAY_NOT_CLOSED");
  EXPECT_EQ(o.message, "day 2012-03-25 is open: close it first (POST /close?day=2012-03-25)");
  EXPECT_EQ(ring_->slot(1).state(), SlotState::kOpen);
  ASSERT_TRUE(Incr(Key("a", kDay) + ",1\n", "api-1", 2).ok());  // still open
  EXPECT_EQ(Get(Key("a", kDay)), "6");
}

TEST_F(RingTest, ClosedDayRefusesWritesButAnswersDuplicates) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n" + Key("a", kDay + 1) + ",1\n", "api-1", 7).ok());
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  EXPECT_EQ(closed_now, 1);
  EXPECT_EQ(ring_->closed_through(), kDay);
  EXPECT_EQ(ring_->slot(1).state(), SlotState::kClosed);
  EXPECT_EQ(ring_->slot(2).state(), SlotState::kOpen);  // kDay + 1 is after the closed day
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());  // idempotent
  EXPECT_EQ(closed_now, 0);

  WriteOutcome o = Incr(Key("a", kDay) + ",1\n", "api-1", 8);
  EXPECT_EQ(o.refusal, Refusal::kClosed);
  EXPECT_EQ(RefusalHttpCode(o.refusal), 409);
  EXPECT_EQ(RefusalStatusText(o.refusal), "DAY_CLOSED");
  EXPECT_EQ(o.message, "day 2012-03-25 is closed: slot 1 holds 2012-03-25 (closed)");
  std::vector<LookupLine> lookups;
  ASSERT_TRUE(ParseLookupBatch("_l|AAAAAAAAAAA=,x\n", &lookups).ok());
  EXPECT_EQ(ring_->SetLookups(kDay, lookups).refusal, Refusal::kClosed);
  EXPECT_TRUE(ring_->SetLookups(kDay + 1, lookups).ok());

  // The batch already applied: a duplicate, whatever the state.
  o = Incr(Key("a", kDay) + ",5\n" + Key("a", kDay + 1) + ",1\n", "api-1", 7);
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(o.duplicate, 2u);
  EXPECT_EQ(o.applied, 0u);
  EXPECT_EQ(Get(Key("a", kDay)), "5");
  EXPECT_EQ(ring_->SourceMark(kDay, "api-1"), 7);
  EXPECT_EQ(ring_->SourceMark(kDay, "api-2"), -1);
}

// The old bug: a write for a released day re-opened it (the slot held the day: "apply
// whatever the state"), and a write for an older day re-opened an empty slot.
TEST_F(RingTest, ReleasedDayIsNeverReopenedByALateIncr) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 1).ok());
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  ASSERT_TRUE(ring_->Release(kDay).ok());
  WriteOutcome o = Incr(Key("a", kDay) + ",1\n", "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kClosed);
  EXPECT_EQ(o.message, "day 2012-03-25 is closed: slot 1 holds 2012-03-25 (released)");
  EXPECT_EQ(Get(Key("a", kDay)), "5");
  // Slot 0 is empty: a day <= W never opens it.
  o = Incr(Key("a", kDay - 1) + ",1\n", "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kClosed);
  EXPECT_EQ(ring_->slot(0).state(), SlotState::kEmpty);
}

TEST_F(RingTest, DayOlderThanTheRingNeverOpensAnEmptySlot) {
  ASSERT_TRUE(Incr(Key("a", kDay + 3) + ",1\n", "api-1", 1).ok());  // slot 1
  WriteOutcome o = Incr(Key("a", kDay) + ",1\n", "api-1", 2);     // slot 1 holds newer
  EXPECT_EQ(o.refusal, Refusal::kExpired);
  o = Incr(Key("a", kDay + 2) + ",1\n", "api-1", 2);  // slot 0, empty, within 3 days of the newest
  EXPECT_TRUE(o.ok()) << o.message;
  o = Incr(Key("a", kDay - 1) + ",1\n", "api-1", 3);  // slot 0 holds newer
  EXPECT_EQ(o.refusal, Refusal::kExpired);
  o = Incr(Key("a", kDay - 2) + ",1\n", "api-1", 3);  // slot 2, empty: 4 days before the newest
  EXPECT_EQ(o.refusal, Refusal::kExpired);
  EXPECT_EQ(o.message, "day 2012-03-23 has expired: the ring's newest day is 2012-03-28");
  EXPECT_EQ(ring_->slot(2).state(), SlotState::kEmpty);
}

// A batch re-sent after its day was closed, released and its slot reused by a newer day is
// still recognised as applied: the marks were kept at close.
TEST_F(RingTest, DuplicateAfterReleaseAndReuseIsStillADuplicate) {
  const std::string body = Key("a", kDay) + ",5\n";
  ASSERT_TRUE(Incr(body, "api-1", 9).ok());
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  ASSERT_TRUE(ring_->Release(kDay).ok());
  ASSERT_TRUE(Incr(Key("b", kDay + 3) + ",1\n", "api-1", 10).ok());  // reuses slot 1
  Reopen();
  WriteOutcome o = Incr(body, "api-1", 9);
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(o.duplicate, 1u);
  EXPECT_EQ(ring_->SourceMark(kDay, "api-1"), 9);
  o = Incr(body, "api-1", 11);  // not applied before: late
  EXPECT_EQ(o.refusal, Refusal::kClosed);
}

// A crash after the slot's closed state was committed and before closed-days was written:
// the release of that day records it first, so its marks outlive the slot.
TEST_F(RingTest, ReleaseRecordsAClosedDayTheWatermarkMissed) {
  ASSERT_TRUE(Incr(Key("a", kDay) + ",5\n", "api-1", 4).ok());
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  ring_.reset();
  ASSERT_EQ(std::remove((dir_.path() + "/" + kClosedDaysFile).c_str()), 0);
  Reopen();
  EXPECT_EQ(ring_->slot(1).state(), SlotState::kClosed);
  EXPECT_EQ(ring_->closed_through(), kNoDay);
  EXPECT_EQ(Incr(Key("a", kDay) + ",1\n", "api-1", 5).refusal, Refusal::kClosed);  // the slot says so
  ASSERT_TRUE(ring_->Release(kDay).ok());
  EXPECT_EQ(ring_->closed_through(), kDay);
  Result<ClosedDays> kept = LoadClosedDays(dir_.path() + "/" + kClosedDaysFile);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->through, kDay);
  EXPECT_EQ(kept->Mark(kDay, "api-1"), 4);
}

TEST_F(RingTest, WatermarkSurvivesReopenAndMovesOnlyUp) {
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay + 1, &closed_now).ok());  // no slot holds it: W moves anyway
  EXPECT_EQ(closed_now, 0);
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());
  EXPECT_EQ(ring_->closed_through(), kDay + 1);
  Reopen();
  EXPECT_EQ(ring_->closed_through(), kDay + 1);
  EXPECT_EQ(Incr(Key("a", kDay + 1) + ",1\n", "api-1", 1).refusal, Refusal::kClosed);
  EXPECT_TRUE(Incr(Key("a", kDay + 2) + ",1\n", "api-1", 1).ok());
  dir_.Write(kClosedDaysFile, "closed_through = 2012-03-26\nmark = 2012-03-26 api-1\n");
  ring_.reset();
  Result<std::unique_ptr<Ring>> r = Ring::Open(dir_.path(), SlotOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir_.path() + "/closed-days: line 2: mark '2012-03-26 api-1' is not 'YYYY-MM-DD SOURCE SEQ'");
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

// Counters leave int64 exactly (docs/realtime.md#overflow-checked-at-acceptance): every
// increment is accepted and counted.
TEST_F(RingTest, CountersPassInt64Exactly) {
  ASSERT_TRUE(Incr(Key("z", kDay) + ",9223372036854775807\n", "api-1", 1).ok());
  ASSERT_TRUE(Incr(Key("z", kDay) + ",9223372036854775807\n" + Key("z", kDay) + ",2\n", "api-1", 2).ok());
  ASSERT_TRUE(Incr(Key("m", kDay) + ",-9223372036854775808\n" + Key("m", kDay) + ",-9223372036854775808\n", "api-1", 3).ok());
  EXPECT_EQ(Get(Key("z", kDay)), "18446744073709551616");
  EXPECT_EQ(Get(Key("m", kDay)), "-18446744073709551616");
  ASSERT_TRUE(ring_->Sync().ok());
  ASSERT_TRUE(Incr(Key("z", kDay) + ",-1\n", "api-1", 4).ok());  // file (16 bytes) + pending
  EXPECT_EQ(Get(Key("z", kDay)), "18446744073709551615");
  Reopen();
  EXPECT_EQ(Get(Key("z", kDay)), "18446744073709551615");
  EXPECT_EQ(Get(Key("m", kDay)), "-18446744073709551616");
  // Back inside int64: stored in 8 bytes again, read the same.
  ASSERT_TRUE(Incr(Key("z", kDay) + ",-9223372036854775807\n" + Key("z", kDay) + ",-9223372036854775807\n", "api-1", 5).ok());
  ASSERT_TRUE(ring_->Sync().ok());
  EXPECT_EQ(Get(Key("z", kDay)), "1");
  std::string out, last, overflow;
  bool more = false;
  ring_->Fwsum("u|", "0000", "zzzz", "", 100, &out, &more, &last, &overflow);
  EXPECT_TRUE(overflow.empty());
}

// Only a counter near ±2^127 (2^64 increments of the largest value do not get there) is
// refused, and the refusal undoes the whole batch.
TEST_F(RingTest, OverflowOf128BitsAnywhereUndoesTheWholeBatch) {
  Seed(Key("z", kDay + 1), kDay + 1, kInt128Max - 10);
  std::string body = Key("a", kDay) + ",5\n" + Key("b", kDay + 1) + ",3\n" + Key("a", kDay) + ",2\n" +
                     Key("z", kDay + 1) + ",11\n";
  WriteOutcome o = Incr(body, "api-1", 2);
  EXPECT_EQ(o.refusal, Refusal::kOverflow);
  EXPECT_EQ(o.message, "line 4: counter '" + Key("z", kDay + 1) + "' would leave 128 bits adding 11");
  EXPECT_EQ(Get(Key("a", kDay)), "<absent>");
  EXPECT_EQ(Get(Key("b", kDay + 1)), "<absent>");
  EXPECT_EQ(Get(Key("z", kDay + 1)), "170141183460469231731687303715884105717");
  EXPECT_EQ(ring_->Mark(1, "api-1"), -1);
  ASSERT_TRUE(Incr(Key("z", kDay + 1) + ",10\n", "api-1", 3).ok());
  EXPECT_EQ(Get(Key("z", kDay + 1)), "170141183460469231731687303715884105727");
  Seed(Key("y", kDay + 1), kDay + 1, kInt128Min + 1);
  EXPECT_EQ(Incr(Key("y", kDay + 1) + ",-2\n", "api-1", 4).refusal, Refusal::kOverflow);
  ASSERT_TRUE(Incr(Key("y", kDay + 1) + ",-1\n", "api-1", 4).ok());
  EXPECT_EQ(Get(Key("y", kDay + 1)), "-170141183460469231731687303715884105728");
}

// /fwsum adds a subkey's hours in 128 bits; a sum that leaves them is named, not written.
TEST_F(RingTest, FwsumIsExactAndNamesASumLeaving128Bits) {
  const std::string h1 = "c.u|k.US." + std::string(EncodeYmdh(kDay * kSecondsPerDay + 3600).value().view());
  const std::string h2 = "c.u|k.US." + std::string(EncodeYmdh(kDay * kSecondsPerDay + 7200).value().view());
  ASSERT_TRUE(Incr(h1 + ",9223372036854775807\n" + h2 + ",9223372036854775807\n", "api-1", 1).ok());
  std::string out, last, overflow;
  bool more = false;
  ring_->Fwsum("c.u|k.", "0000", "zzzz", "", 100, &out, &more, &last, &overflow);
  EXPECT_EQ(out, "US,18446744073709551614\n");
  EXPECT_TRUE(overflow.empty());
  Seed(h1, kDay, kInt128Max - INT64_MAX);
  out.clear();
  ring_->Fwsum("c.u|k.", "0000", "zzzz", "", 100, &out, &more, &last, &overflow);
  EXPECT_EQ(out, "");
  EXPECT_EQ(overflow, "US");
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
