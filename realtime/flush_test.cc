// The ring's flusher: reads during a flush, flush-then-act ordering, overflow checks across
// a flush, and kill -9 while a flush is committing.
#include <gtest/gtest.h>
#include <signal.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include "base/test_dir.h"
#include "realtime/file_syncer.h"
#include "realtime/ring_fixture.h"

namespace clickatron::realtime {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

// What the shard reports as synced follows synced_round(): it advances only over fsyncs that
// succeeded, and an fsync that fails stops it for good (the kernel reports a lost write once).
TEST(FileSyncerTest, SyncedRoundFollowsSuccessfulFsyncsAndStopsAtTheFirstFailure) {
  TestDir dir;
  const std::string good = dir.path() + "/good";
  std::ofstream(good) << "x";
  FileSyncer syncer;
  ASSERT_GE(syncer.notify_fd(), 0);
  EXPECT_EQ(syncer.synced_round(), 0u);
  EXPECT_EQ(syncer.requested_round(), 0u);
  const uint64_t first = syncer.Request(good);
  EXPECT_EQ(syncer.requested_round(), first);
  syncer.Flush();
  EXPECT_EQ(syncer.synced_round(), first);
  EXPECT_TRUE(Readable(syncer.notify_fd()));
  syncer.DrainNotify();
  EXPECT_FALSE(Readable(syncer.notify_fd()));

  syncer.Request(dir.path() + "/missing");  // cannot be opened, so not on the device
  syncer.Flush();
  const uint64_t after = syncer.Request(good);
  syncer.Flush();
  EXPECT_EQ(syncer.synced_round(), first);
  EXPECT_LT(syncer.synced_round(), after);
  EXPECT_EQ(syncer.stats().errors, 1u);
}

class FlushTest : public RingFixture {
 protected:
  WriteOutcome Incr(const std::string& body, int64_t seq, std::string_view source = "api-1") {
    return RingFixture::Incr(body, source, seq);
  }
  // A batch adding 1 to `n` keys of kDay: enough work that a flush of it takes a while.
  static std::string Wide(int n, int64_t day = kDay) {
    std::string body;
    for (int i = 0; i < n; ++i) body += Key("k" + std::to_string(i), day, i % 24) + ",1\n";
    return body;
  }
  // Polls (no sleeping) until the running flush is retired.
  void WaitRetired() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ring_->flushing()) {
      ring_->Poll();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "flush never finished";
    }
  }
};

TEST_F(FlushTest, WritesDuringAFlushLandInTheNextAndReadsSeeEverything) {
  ASSERT_TRUE(Incr(Wide(20000), 1).ok());
  ASSERT_TRUE(ring_->BeginFlush());
  EXPECT_FALSE(ring_->BeginFlush());  // one at a time
  const uint64_t first = ring_->started_generation();
  // Accepted while the flusher applies seq 1: not in its table.
  ASSERT_TRUE(Incr(Key("k0", kDay, 0) + ",5\n" + Key("new") + ",2\n", 2).ok());
  EXPECT_EQ(ring_->Mark(1, "api-1"), 2);
  // Reads merge file + frozen + active exactly, whether or not the flush is done.
  EXPECT_EQ(Get(Key("k0", kDay, 0)), "6");
  EXPECT_EQ(Get(Key("new")), "2");
  EXPECT_EQ(ring_->Records(1), 20001u);
  std::string out;
  bool more = true;
  EXPECT_EQ(ring_->Fwmatch(Key("k0", kDay, 0), "", 10, &out, &more), 1u);
  EXPECT_FALSE(more);
  EXPECT_EQ(out, Key("k0", kDay, 0) + ",6\n");
  WaitRetired();
  EXPECT_EQ(ring_->committed_generation(), first);
  EXPECT_FALSE(ring_->slot(1).pending());
  // Only seq 1 is in the file: seq 2 waits for the next flush.
  EXPECT_EQ(ring_->slot(1).records(), 20000u);
  ASSERT_TRUE(ring_->BeginFlush());
  WaitRetired();
  EXPECT_EQ(ring_->committed_generation(), first + 1);
  EXPECT_EQ(ring_->slot(1).records(), 20001u);
  EXPECT_FALSE(ring_->BeginFlush());  // nothing pending
  EXPECT_GE(ring_->stats().syncs, 2u);
}

TEST_F(FlushTest, ExportCursorMergesPendingWritesInKeyOrder) {
  ASSERT_TRUE(Incr(Key("b") + ",1\n" + Key("d") + ",1\n", 1).ok());
  ASSERT_TRUE(ring_->Sync().ok());
  ASSERT_TRUE(Incr(Key("a") + ",1\n" + Key("d") + ",2\n" + Key("e") + ",1\n", 2).ok());
  std::vector<LookupLine> lookups;
  ASSERT_TRUE(ParseLookupBatch("_l|AAAAAAAAAAA=,x\n", &lookups).ok());
  ASSERT_TRUE(ring_->SetLookups(kDay, lookups).ok());
  std::unique_ptr<MergedCursor> c = ring_->Cursor(kDay);
  ASSERT_NE(c, nullptr);
  std::string seen;
  for (c->Seek(""); c->Valid(); c->Next()) {
    seen.append(c->key()).push_back('=');
    c->AppendValue(&seen);
    seen.push_back(' ');
  }
  EXPECT_EQ(seen, "_l|AAAAAAAAAAA==x " + Key("a") + "=1 " + Key("b") + "=1 " + Key("d") + "=3 " + Key("e") + "=1 ");
  c->Seek(Key("b"), {}, /*after=*/true);
  ASSERT_TRUE(c->Valid());
  EXPECT_EQ(c->key(), Key("d"));
  EXPECT_EQ(ring_->Cursor(kDay + 3), nullptr);
}

TEST_F(FlushTest, CloseAndResetFlushFirst) {
  ASSERT_TRUE(Incr(Wide(5000), 1).ok());
  ASSERT_TRUE(ring_->BeginFlush());
  ASSERT_TRUE(Incr(Key("late") + ",3\n", 2).ok());  // pending while seq 1 flushes
  int closed_now = 0;
  ASSERT_TRUE(ring_->CloseDay(kDay, &closed_now).ok());  // waits, flushes seq 2, then closes
  EXPECT_EQ(closed_now, 1);
  EXPECT_FALSE(ring_->flushing());
  EXPECT_EQ(ring_->slot(1).Mark("api-1"), -1);     // the slot's own (open-time) copy
  // Nothing accepted after the close lands in the closed slot.
  EXPECT_EQ(Incr(Key("after") + ",1\n", 3).refusal, Refusal::kClosed);
  Reopen();  // what the file holds, nothing pending: both batches and the close
  EXPECT_EQ(ring_->slot(1).state(), SlotState::kClosed);
  EXPECT_EQ(Get(Key("late")), "3");
  EXPECT_EQ(Get(Key("after")), "<absent>");
  EXPECT_EQ(Get(Key("k0", kDay, 0)), "1");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 2);
  ASSERT_TRUE(ring_->Release(kDay).ok());

  // A flush is running (another slot) when a new day takes the released slot: the reset
  // waits for it, and no flush is left applying to the file being replaced.
  ASSERT_TRUE(Incr(Key("other", kDay + 1) + ",1\n", 3).ok());
  ASSERT_TRUE(ring_->BeginFlush());
  ASSERT_TRUE(Incr(Key("x", kDay + 3) + ",4\n", 4).ok());
  EXPECT_EQ(ring_->slot(1).day(), kDay + 3);
  EXPECT_EQ(Get(Key("x", kDay + 3)), "4");
  EXPECT_EQ(Get(Key("late")), "<absent>");
  EXPECT_EQ(ring_->Records(1), 1u);
  EXPECT_EQ(ring_->Mark(1, "api-1"), 4);
  Reopen();
  EXPECT_EQ(Get(Key("x", kDay + 3)), "4");
  EXPECT_EQ(Get(Key("other", kDay + 1)), "1");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 4);
}

TEST_F(FlushTest, OverflowIsRefusedAtAcceptanceAcrossAFlush) {
  Seed(Key("z"), kDay, kInt128Max - 10);
  Seed(Key("m"), kDay, kInt128Min + 10);
  ASSERT_TRUE(Incr(Key("z") + ",0\n", 1).ok());  // a mark, and a frozen table to flush
  ASSERT_TRUE(ring_->BeginFlush());
  // Stored (or in flight) + pending: exact, whatever the flusher has done so far.
  ASSERT_TRUE(Incr(Key("z") + ",5\n", 2).ok());
  WriteOutcome o = Incr(Key("a") + ",1\n" + Key("z") + ",6\n", 3);
  EXPECT_EQ(o.refusal, Refusal::kOverflow);
  EXPECT_EQ(o.message, "line 2: counter '" + Key("z") + "' would leave 128 bits adding 6");
  EXPECT_EQ(Get(Key("a")), "<absent>");  // the batch left nothing behind
  EXPECT_EQ(Incr(Key("m") + ",-11\n", 3).refusal, Refusal::kOverflow);
  ASSERT_TRUE(Incr(Key("m") + ",-10\n" + Key("z") + ",5\n", 3).ok());
  EXPECT_EQ(Get(Key("z")), "170141183460469231731687303715884105727");
  EXPECT_EQ(Get(Key("m")), "-170141183460469231731687303715884105728");
  // Small counters beside huge ones... are exact.
  ASSERT_TRUE(Incr(Key("a") + ",1\n", 4).ok());
  ASSERT_TRUE(ring_->Sync().ok());
  Reopen();
  EXPECT_EQ(Get(Key("z")), "170141183460469231731687303715884105727");
  EXPECT_EQ(Get(Key("m")), "-170141183460469231731687303715884105728");
  EXPECT_EQ(Get(Key("a")), "1");
  EXPECT_EQ(Incr(Key("z") + ",1\n", 5).refusal, Refusal::kOverflow);  // bound loaded at open
  EXPECT_EQ(Incr(Key("m") + ",-1\n", 5).refusal, Refusal::kOverflow);
}

TEST_F(FlushTest, FullMemtablesAreRefusedWith503) {
  ring_.reset();
  Result<std::unique_ptr<Ring>> r = Ring::Open(dir_.path(), SlotOptions{}, /*max_pending_bytes=*/64 << 10);
  ASSERT_TRUE(r.ok());
  ring_ = std::move(r).value();
  ASSERT_TRUE(Incr(Wide(2000), 1).ok());  // past 64 KiB once accepted
  WriteOutcome o = Incr(Key("more") + ",1\n", 2);
  EXPECT_EQ(o.refusal, Refusal::kBehind);
  EXPECT_EQ(RefusalHttpCode(o.refusal), 503);
  EXPECT_EQ(RefusalStatusText(o.refusal), "FLUSH_BEHIND");
  EXPECT_EQ(ring_->Mark(1, "api-1"), 1);  // nothing of seq 2 was recorded
  ASSERT_TRUE(ring_->Sync().ok());
  EXPECT_TRUE(Incr(Key("more") + ",1\n", 2).ok());
}

// kill -9 of a process whose flusher is committing: afterwards every slot holds exactly
// the batches up to its mark (all of each, none of the others).
TEST(FlushKill, Kill9DuringAFlushKeepsWholeBatchesWithTheirMarks) {
  TestDir dir;
  constexpr int kKeys = 3000;
  for (int round = 0; round < 3; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      auto ring = Ring::Open(dir.path(), SlotOptions{});
      if (!ring.ok()) ::_exit(3);
      std::vector<IncrLine> lines;
      std::string body;
      for (int i = 0; i < kKeys; ++i) body += Key("k" + std::to_string(i), kDay, i % 24) + ",1\n";
      int64_t seq = std::max<int64_t>(0, (*ring)->Mark(1, "api-1"));  // seqs from 1
      for (int flushes = 0;;) {
        if (!ParseIncrBatch(body, &lines).ok()) ::_exit(4);
        if (!(*ring)->Incr(&lines, "api-1", ++seq).ok()) ::_exit(5);
        (*ring)->Poll();
        if ((*ring)->BeginFlush() && ++flushes == 3) {
          char c = 1;
          (void)!::write(ready[1], &c, 1);  // a flush of a few batches is starting now
        }
      }
    }
    ::close(ready[1]);
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::kill(pid, SIGKILL);
    int status;
    ::waitpid(pid, &status, 0);
    ::close(ready[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;

    auto ring = Ring::Open(dir.path(), SlotOptions{});
    ASSERT_TRUE(ring.ok()) << ring.status().message();
    const int64_t mark = (*ring)->Mark(1, "api-1");
    ASSERT_GE(mark, 1);
    for (int i = 0; i < kKeys; i += 97) {
      std::string v;
      ASSERT_TRUE((*ring)->Get(Key("k" + std::to_string(i), kDay, i % 24), &v));
      ASSERT_EQ(v, std::to_string(mark)) << "round " << round << " key " << i;
    }
    EXPECT_EQ((*ring)->Records(1), static_cast<uint64_t>(kKeys));
  }
}

}  // namespace
}  // namespace clickatron::realtime
