#include "oplog/replay.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "oplog/cursors.h"
#include "oplog/frame.h"
#include "oplog/oplog.h"
#include "oplog/replay_skip.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

constexpr char kRounds[] = "delivery-realtime-1.rounds";

// A log of records 1..n with cursors realtime-0 at n and realtime-1 at `cursor1`, and the
// API's rounds file of realtime-1 beside it.
void MakeLog(const std::string& dir, uint64_t n, uint64_t cursor1, Options o = {}) {
  auto log = Oplog::Open(dir, o);
  ASSERT_TRUE(log.ok()) << log.status().message();
  for (uint64_t i = 1; i <= n; ++i) ASSERT_TRUE((*log)->Append("record " + std::to_string(i)).ok());
  ASSERT_TRUE((*log)->Sync().ok());
  ASSERT_TRUE((*log)->SetCursor("realtime-0", n).ok());
  ASSERT_TRUE((*log)->SetCursor("realtime-1", cursor1).ok());
  ASSERT_TRUE((*log)->SaveCursors().ok());
  std::ofstream(dir + "/" + kRounds) << "boot x\n" << n << "\n";
}

RewindRequest Request(uint64_t from = 0) {
  RewindRequest r;
  r.cursor = "realtime-1";
  r.from = from;
  r.consumer_files = [](const std::string&) { return std::vector<std::string>{kRounds}; };
  return r;
}

CursorMap Saved(const std::string& dir) {
  Result<CursorMap> c = LoadCursors(dir);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : CursorMap{};
}

TEST(Replay, RewindsToTheOldestRecordAndRemovesTheRoundsFile) {
  TestDir dir;
  MakeLog(dir.path(), 40, 40);
  Result<Rewind> r = RewindCursor(dir.path(), Request());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->cursors.at(0).old_cursor, 40u);
  EXPECT_EQ(r->new_cursor, 0u);
  EXPECT_EQ(r->records, 40u);
  EXPECT_EQ(r->first_seq, 1u);
  EXPECT_EQ(r->last_seq, 40u);
  EXPECT_EQ(r->removed, std::vector<std::string>{dir / kRounds});
  EXPECT_EQ(r->recovery, "");
  EXPECT_FALSE(std::filesystem::exists(dir / kRounds));
  EXPECT_EQ(Saved(dir.path()), (CursorMap{{"realtime-0", 40}, {"realtime-1", 0}}));
  // The log itself is untouched, and a reopened log resumes the consumer after seq 0.
  auto log = Oplog::Open(dir.path(), {});
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->cursor("realtime-1"), 0u);
  EXPECT_EQ((*log)->cursor("realtime-0"), 40u);
  EXPECT_EQ(ReadAll(**log).size(), 40u);
}

TEST(Replay, SkipThroughWritesTheRuleForTheOldCursorAndAPlainReplayRemovesIt) {
  TestDir dir;
  MakeLog(dir.path(), 40, 30);  // realtime-1 had received records up to 30
  RewindRequest request = Request();
  request.skip_through_day = 20780;  // 2026-11-23
  Result<Rewind> r = RewindCursor(dir.path(), request);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->cursors.at(0).skip.through_day, 20780);
  EXPECT_EQ(r->cursors.at(0).skip.through_seq, 30u);  // only what the shard had received can be archived
  EXPECT_EQ(r->cursors.at(0).skip_path, dir / "replay-skip-realtime-1");
  std::string text;
  std::getline(std::ifstream(r->cursors.at(0).skip_path), text);
  EXPECT_EQ(text, "skip_through_day=2026-11-23 through_seq=30");
  Result<ReplaySkip> loaded = LoadReplaySkip(dir.path(), "realtime-1");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->Drops(30, 20780));
  EXPECT_FALSE(loaded->Drops(31, 20780));
  EXPECT_FALSE(loaded->Drops(30, 20781));
  EXPECT_FALSE(LoadReplaySkip(dir.path(), "realtime-0")->active());  // no file: no rule
  // The next replay, without the option, removes it.
  r = RewindCursor(dir.path(), Request());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->cursors.at(0).skip.active());
  EXPECT_FALSE(std::filesystem::exists(dir / "replay-skip-realtime-1"));
  // A rule file that does not parse is an error naming it.
  WriteBytes(dir / "replay-skip-realtime-1", "skip_through_day=2026-11-22 through_seq=x\n");
  Result<ReplaySkip> bad = LoadReplaySkip(dir.path(), "realtime-1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            dir / "replay-skip-realtime-1" +
                ": through_seq 'x' is not a seq >= 1 (expected 'skip_through_day=YYYY-MM-DD "
                "through_seq=N')");
}

TEST(Replay, FromASeqAndWithoutARoundsFile) {
  TestDir dir;
  MakeLog(dir.path(), 40, 40);
  std::filesystem::remove(dir / kRounds);
  Result<Rewind> r = RewindCursor(dir.path(), Request(31));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_cursor, 30u);
  EXPECT_EQ(r->records, 10u);
  EXPECT_EQ(r->first_seq, 31u);
  EXPECT_TRUE(r->removed.empty());
  EXPECT_EQ(Saved(dir.path()).at("realtime-1"), 30u);
  // Replaying from the cursor's own next record is allowed (it drops the rounds file).
  r = RewindCursor(dir.path(), Request(31));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->cursors.at(0).old_cursor, 30u);
  EXPECT_EQ(r->new_cursor, 30u);
}

TEST(Replay, RefusedWhileTheLogIsOpenAndChangesNothing) {
  TestDir dir;
  MakeLog(dir.path(), 5, 5);
  auto running = Oplog::Open(dir.path(), {});  // the API
  ASSERT_TRUE(running.ok());
  Result<Rewind> r = RewindCursor(dir.path(), Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "oplog directory " + dir.path() +
                                      " is in use by another process (it holds " + dir.path() +
                                      "/LOCK; a running clickatron-api keeps its oplog locked)");
  EXPECT_TRUE(std::filesystem::exists(dir / kRounds));
  EXPECT_EQ(Saved(dir.path()).at("realtime-1"), 5u);
  running = Status::Error("closed");
  EXPECT_TRUE(RewindCursor(dir.path(), Request()).ok());  // and fine once it has stopped
}

TEST(Replay, InUseComesBeforeACursorTheRunningProcessHasNotSavedYet) {
  TestDir dir;
  auto running = Oplog::Open(dir.path(), {});  // an API that has not saved its cursors yet
  ASSERT_TRUE(running.ok());
  ASSERT_TRUE((*running)->Append("a").ok());
  ASSERT_TRUE((*running)->SetCursor("realtime-1", 1).ok());
  Result<Rewind> r = RewindCursor(dir.path(), Request());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is in use by another process"), std::string::npos)
      << r.status().message();
}

TEST(Replay, RefusesUnknownCursorsAndMissingDirectoriesWithoutCreatingAnything) {
  TestDir dir;
  MakeLog(dir.path(), 5, 5);
  RewindRequest req = Request();
  req.cursor = "realtime-7";
  Result<Rewind> r = RewindCursor(dir.path(), req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "no cursor named 'realtime-7' in " + dir.path() +
                                      "/cursors (cursors: realtime-0, realtime-1)");
  req.cursor = "bad name";
  EXPECT_EQ(RewindCursor(dir.path(), req).status().message(),
            "cursor name 'bad name' has a character outside [A-Za-z0-9_.:-]");

  const std::string missing = dir / "missing";
  r = RewindCursor(missing, Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "open directory " + missing + ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(missing));

  TestDir empty;  // not an oplog: no cursors at all
  r = RewindCursor(empty.path(), Request());
  EXPECT_EQ(r.status().message(),
            "no cursor named 'realtime-1' in " + empty.path() + "/cursors (cursors: none)");
  EXPECT_TRUE(std::filesystem::is_empty(empty.path()));

  req = Request();
  req.consumer_files = [](const std::string&) { return std::vector<std::string>{"../cursors"}; };
  EXPECT_EQ(RewindCursor(dir.path(), req).status().message(),
            "'../cursors' is not a file name in the oplog directory");
  EXPECT_TRUE(std::filesystem::exists(dir / kRounds));
}

TEST(Replay, RefusesASeqOutsideTheLog) {
  TestDir dir;
  std::atomic<int64_t> now{1700000000 - 1700000000 % 3600};
  Options o;
  o.clock = [&] { return now.load(); };
  {
    auto log = Oplog::Open(dir.path(), o);
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->Append("old").ok());  // seqs 1..10
    ASSERT_TRUE((*log)->Sync().ok());
    now += 3600;  // the next hour: a new segment
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->Append("new").ok());  // seqs 11..20
    ASSERT_TRUE((*log)->Sync().ok());
    ASSERT_TRUE((*log)->SetCursor("realtime-0", 20).ok());
    ASSERT_TRUE((*log)->SetCursor("realtime-1", 20).ok());
    ASSERT_TRUE((*log)->SaveCursors().ok());
    ASSERT_EQ(*(*log)->RemoveExpiredSegments(now + 73 * 3600), 1u);  // seqs 1..10 are gone
  }
  Result<Rewind> r = RewindCursor(dir.path(), Request(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "seq 5 is before the oldest record " + dir.path() +
                                      " still holds (seq 11; older segments were deleted by "
                                      "retention)");
  r = RewindCursor(dir.path(), Request(21));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "seq 21 is after the last record in " + dir.path() + " (seq 20)");
  EXPECT_EQ(Saved(dir.path()).at("realtime-1"), 20u);
  r = RewindCursor(dir.path(), Request());  // the default: the oldest kept
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_cursor, 10u);
  EXPECT_EQ(r->records, 10u);
  EXPECT_EQ(r->first_seq, 11u);
}

TEST(Replay, RefusesAnEmptyLog) {
  TestDir dir;
  {
    auto log = Oplog::Open(dir.path(), {});
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->SetCursor("realtime-1", 0).ok());
  }
  EXPECT_EQ(RewindCursor(dir.path(), Request()).status().message(),
            "the oplog in " + dir.path() + " holds no records");
}

TEST(Replay, NeverSkipsRecordsNotYetDelivered) {
  TestDir dir;
  MakeLog(dir.path(), 40, 20);
  Result<Rewind> r = RewindCursor(dir.path(), Request(30));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cursor 'realtime-1' is at seq 20 and seq 21 has not been delivered yet: --from 30 "
            "would skip it (replay only moves a cursor back; use --from 21 or lower)");
  EXPECT_TRUE(std::filesystem::exists(dir / kRounds));
  EXPECT_EQ(Saved(dir.path()).at("realtime-1"), 20u);
}

TEST(Replay, MayStepOverSeqsNoRecordHas) {
  // Seqs have gaps (a failed write keeps its numbers): records 1, 2, 7, 8; cursor at 2.
  TestDir dir;
  std::string bytes;
  for (uint64_t seq : {1, 2, 7, 8}) AppendFrame(seq, "r" + std::to_string(seq), &bytes);
  std::ofstream(dir / SegmentFileName(1), std::ios::binary) << bytes;
  ASSERT_TRUE(SaveCursors(dir.path(), {{"realtime-1", 2}}).ok());
  Result<Rewind> r = RewindCursor(dir.path(), Request(7));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_cursor, 6u);
  EXPECT_EQ(r->records, 2u);
  EXPECT_EQ(r->first_seq, 7u);
  EXPECT_EQ(r->last_seq, 8u);
}

TEST(Replay, ReportsWhatOpeningTheLogRepaired) {
  TestDir dir;
  MakeLog(dir.path(), 3, 3);
  std::ofstream(dir / SegmentFileName(1), std::ios::binary | std::ios::app) << "torn";
  Result<Rewind> r = RewindCursor(dir.path(), Request());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->recovery.find("cut 4 bytes"), std::string::npos) << r->recovery;
  EXPECT_EQ(r->records, 3u);
}

}  // namespace
}  // namespace clickatron::oplog
