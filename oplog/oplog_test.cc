#include <gtest/gtest.h>
#include <utime.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "oplog/cursors.h"
#include "oplog/frame.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

std::string Payload(uint64_t i) {
  // Varying sizes and every byte value, so framing and escaping get exercised.
  std::string p = "rec " + std::to_string(i) + " ";
  for (uint64_t k = 0; k < i % 37; ++k) p.push_back(static_cast<char>((i * 31 + k) & 0xff));
  return p;
}

std::unique_ptr<Oplog> MustOpen(const std::string& dir, Options options = {}) {
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir, std::move(options));
  EXPECT_TRUE(log.ok()) << log.status().message();
  return log.ok() ? std::move(log).value() : nullptr;
}

class PolicyTest : public ::testing::TestWithParam<SyncPolicy> {};

TEST_P(PolicyTest, RoundTripsAndContinuesSeqAcrossRestart) {
  TestDir dir;
  {
    Options o;
    o.sync = GetParam();
    auto log = MustOpen(dir.path(), o);
    for (uint64_t i = 1; i <= 500; ++i) {
      Result<uint64_t> seq = log->Append(Payload(i));
      ASSERT_TRUE(seq.ok()) << seq.status().message();
      ASSERT_EQ(*seq, i);
    }
    ASSERT_TRUE(log->Sync().ok());
    EXPECT_EQ(log->durable_seq(), 500u);
    EXPECT_EQ(log->last_seq(), 500u);
    auto all = ReadAll(*log);
    ASSERT_EQ(all.size(), 500u);
    for (uint64_t i = 1; i <= 500; ++i) {
      ASSERT_EQ(all[i - 1].first, i);
      ASSERT_EQ(all[i - 1].second, Payload(i));
    }
  }
  auto log = MustOpen(dir.path());
  EXPECT_EQ(log->recovery().records, 500u);
  EXPECT_EQ(log->recovery().last_seq, 500u);
  EXPECT_EQ(log->recovery().dropped_bytes, 0u);
  EXPECT_EQ(log->durable_seq(), 500u);
  ASSERT_EQ(*log->Append("after restart"), 501u);
  ASSERT_TRUE(log->Sync().ok());
  auto all = ReadAll(*log, 499);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], std::make_pair(uint64_t{500}, Payload(500)));
  EXPECT_EQ(all[1], std::make_pair(uint64_t{501}, std::string("after restart")));
}

TEST_P(PolicyTest, ReportsDurabilityInSeqOrder) {
  TestDir dir;
  std::mutex mu;
  std::vector<uint64_t> reported;
  Options o;
  o.sync = GetParam();
  o.on_sync = [&](const SyncReport& r) {
    EXPECT_EQ(r.failed_last, 0u) << r.error;
    std::lock_guard<std::mutex> lock(mu);
    reported.push_back(r.durable_seq);
  };
  auto log = MustOpen(dir.path(), o);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(log->Append("x").ok());
  if (GetParam() == SyncPolicy::kNone) {
    EXPECT_EQ(log->durable_seq(), 300u);  // at once
  }
  ASSERT_TRUE(log->Sync().ok());
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(reported.empty());
  EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));
  EXPECT_EQ(reported.back(), 300u);
  // `always` syncs each record on its own: one report per record.
  if (GetParam() == SyncPolicy::kAlways) {
    EXPECT_EQ(reported.size(), 300u);
  }
  if (GetParam() != SyncPolicy::kNone) {
    EXPECT_EQ(log->GetStats().syncs, reported.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Oplog, PolicyTest,
                         ::testing::Values(SyncPolicy::kAlways, SyncPolicy::kBatch, SyncPolicy::kNone),
                         [](const auto& info) { return std::string(SyncPolicyName(info.param)); });

TEST(Oplog, ParsesSyncPolicies) {
  EXPECT_EQ(*ParseSyncPolicy("always"), SyncPolicy::kAlways);
  EXPECT_EQ(*ParseSyncPolicy("batch"), SyncPolicy::kBatch);
  EXPECT_EQ(*ParseSyncPolicy("none"), SyncPolicy::kNone);
  EXPECT_EQ(ParseSyncPolicy("fsync").status().message(),
            "oplog sync policy 'fsync' is not one of always, batch, none");
}

TEST(Oplog, RejectsBadAppendsAndChangesNothing) {
  TestDir dir;
  Options o;
  o.max_queued_bytes = 1000;
  auto log = MustOpen(dir.path(), o);
  EXPECT_EQ(log->Append("").status().message(), "oplog record is empty");
  EXPECT_EQ(log->Append(std::string(kMaxPayload + 1, 'x')).status().message(),
            "oplog record of 16777217 bytes is larger than the limit of 16777216");
  EXPECT_EQ(log->Append(std::string(1000, 'x')).status().message(),
            "oplog write queue is full (0 bytes waiting for the disk)");
  EXPECT_EQ(log->last_seq(), 0u);
  ASSERT_EQ(*log->Append("ok"), 1u);
  ASSERT_TRUE(log->Sync().ok());
  EXPECT_EQ(ReadAll(*log).size(), 1u);
}

TEST(Oplog, OneProcessPerDirectory) {
  TestDir dir;
  auto log = MustOpen(dir.path());
  Result<std::unique_ptr<Oplog>> second = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            "oplog directory " + dir.path() + " is in use by another process (it holds " +
                dir.path() + "/LOCK; a running clickatron-api keeps its oplog locked)");
}

TEST(Oplog, RotatesBySize) {
  TestDir dir;
  Options o = PlainSegments();
  o.segment_bytes = 1000;
  const std::string payload(100, 'p');  // frame of 120 bytes: 8 fit in a segment
  {
    auto log = MustOpen(dir.path(), o);
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(log->Append(payload).ok());
      ASSERT_TRUE(log->Sync().ok());  // one write per record, so rotation is exact
    }
    EXPECT_EQ(log->GetStats().segments, 13u);
    EXPECT_EQ(log->GetStats().bytes, 100u * 120u);
    auto all = ReadAll(*log, 0, 3);
    ASSERT_EQ(all.size(), 100u);
    for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(all[i].first, i + 1);
  }
  std::vector<std::string> names = SegmentNames(dir.path());
  ASSERT_EQ(names.size(), 13u);
  EXPECT_EQ(names[0], "seg-00000000000000000001.log");
  EXPECT_EQ(names[1], "seg-00000000000000000009.log");
  EXPECT_EQ(names[12], "seg-00000000000000000097.log");
  for (const std::string& name : names) {
    EXPECT_LE(std::filesystem::file_size(dir / name), 1000u) << name;
  }
  auto log = MustOpen(dir.path(), o);
  EXPECT_EQ(log->recovery().segments, 13u);
  EXPECT_EQ(ReadAll(*log, 50).size(), 50u);
}

TEST(Oplog, RotatesWhenTheHourChanges) {
  TestDir dir;
  std::atomic<int64_t> now{1700000000 - 1700000000 % 3600};  // the top of an hour
  Options o = PlainSegments();
  o.clock = [&] { return now.load(); };
  auto log = MustOpen(dir.path(), o);
  ASSERT_TRUE(log->Append("a").ok());
  ASSERT_TRUE(log->Sync().ok());
  now += 3599;  // same hour
  ASSERT_TRUE(log->Append("b").ok());
  ASSERT_TRUE(log->Sync().ok());
  EXPECT_EQ(SegmentNames(dir.path()).size(), 1u);
  now += 1;  // next hour
  ASSERT_TRUE(log->Append("c").ok());
  ASSERT_TRUE(log->Sync().ok());
  EXPECT_EQ(SegmentNames(dir.path()),
            (std::vector<std::string>{"seg-00000000000000000001.log", "seg-00000000000000000003.log"}));
  auto all = ReadAll(*log);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].second, "c");
}

TEST(Oplog, ReaderBatchesByCountAndBytesAndSeesOnlyReadableRecords) {
  TestDir dir;
  auto log = MustOpen(dir.path());
  std::unique_ptr<Reader> reader = log->NewReader();
  std::vector<Reader::Record> records;
  ASSERT_TRUE(reader->Read(0, 10, 1000, &records).ok());
  EXPECT_TRUE(records.empty());  // an empty log
  for (int i = 1; i <= 20; ++i) ASSERT_TRUE(log->Append(std::string(10, 'a' + i % 26)).ok());
  ASSERT_TRUE(log->Append(std::string(5000, 'L')).ok());  // seq 21, larger than a batch
  ASSERT_TRUE(log->Sync().ok());

  ASSERT_TRUE(reader->Read(0, 4, 1000, &records).ok());
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].seq, 1u);
  EXPECT_EQ(records[3].seq, 4u);
  ASSERT_TRUE(reader->Read(4, 100, 35, &records).ok());  // 3 payloads of 10 fit in 35
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].seq, 5u);
  ASSERT_TRUE(reader->Read(20, 100, 35, &records).ok());  // one record over the byte limit
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].seq, 21u);
  EXPECT_EQ(records[0].payload, std::string(5000, 'L'));
  ASSERT_TRUE(reader->Read(21, 100, 35, &records).ok());
  EXPECT_TRUE(records.empty());  // caught up
  ASSERT_TRUE(reader->Read(2, 1, 1000, &records).ok());  // back again: finds its place
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].seq, 3u);

  ASSERT_TRUE(log->Append("new").ok());
  ASSERT_TRUE(log->Sync().ok());
  ASSERT_TRUE(reader->Read(21, 100, 1000, &records).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].seq, 22u);
  EXPECT_EQ(records[0].payload, "new");
}

TEST(Oplog, CursorsAreValidatedPersistedAndReportedAsBacklog) {
  TestDir dir;
  {
    auto log = MustOpen(dir.path());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->Append("r").ok());
    EXPECT_EQ(log->SetCursor("shard 0", 1).message(),
              "cursor name 'shard 0' has a character outside [A-Za-z0-9_.:-]");
    EXPECT_EQ(log->SetCursor("", 1).message(), "cursor name is empty");
    EXPECT_EQ(log->SetCursor("shard-0", 11).message(),
              "cursor 'shard-0' cannot be set to seq 11, past the last record (seq 10)");
    EXPECT_EQ(log->cursor("shard-0"), 0u);
    ASSERT_TRUE(log->SetCursor("shard-0", 4).ok());
    ASSERT_TRUE(log->SetCursor("127.0.0.1:7102", 10).ok());
    EXPECT_EQ(log->cursor("shard-0"), 4u);
    ASSERT_TRUE(log->SaveCursors().ok());
    Result<CursorMap> saved = LoadCursors(dir.path());
    ASSERT_TRUE(saved.ok());
    EXPECT_EQ(*saved, (CursorMap{{"127.0.0.1:7102", 10}, {"shard-0", 4}}));
    EXPECT_FALSE(std::filesystem::exists(dir / "cursors.tmp"));
    Stats stats = log->GetStats();
    ASSERT_EQ(stats.cursors.size(), 2u);
    EXPECT_EQ(stats.cursors[1].name, "shard-0");
    EXPECT_EQ(stats.cursors[1].backlog, 6u);
    EXPECT_EQ(stats.cursors[0].backlog, 0u);
    ASSERT_TRUE(log->SetCursor("shard-0", 7).ok());  // saved by the sync thread or at close
  }
  std::ifstream in(dir / "cursors");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "127.0.0.1:7102 10\nshard-0 7\n");
  auto log = MustOpen(dir.path());
  EXPECT_EQ(log->cursor("shard-0"), 7u);
  ASSERT_TRUE(log->RemoveCursor("shard-0").ok());
  EXPECT_EQ(log->RemoveCursor("shard-0").message(), "no cursor named 'shard-0'");
}

TEST(Oplog, SyncThreadSavesCursorsWithoutBeingAsked) {
  TestDir dir;
  Options o;
  o.cursor_save_interval = std::chrono::milliseconds(10);
  auto log = MustOpen(dir.path(), o);
  ASSERT_TRUE(log->Append("r").ok());
  ASSERT_TRUE(log->SetCursor("s", 1).ok());
  for (int i = 0; i < 500 && log->GetStats().cursors[0].saved_seq != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling with a deadline
  }
  EXPECT_EQ(log->GetStats().cursors[0].saved_seq, 1u);
  EXPECT_EQ(*LoadCursors(dir.path()), (CursorMap{{"s", 1}}));
}

TEST(Oplog, BadCursorFileIsAnErrorNamingTheLine) {
  TestDir dir;
  std::ofstream(dir / "cursors") << "a 1\nb x\n";
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), dir / "cursors" + " line 2: seq 'x' is not a number");
}

TEST(Oplog, RetentionNeedsEveryCursorPastASegmentAndItsAge) {
  TestDir dir;
  const int64_t hour0 = 1700000000 - 1700000000 % 3600;
  std::atomic<int64_t> now{hour0};
  Options o;
  o.clock = [&] { return now.load(); };
  o.retention = std::chrono::hours(72);
  std::ofstream(dir / "realtime-shards") << "127.0.0.1:7101\n";  // the API's own file
  auto log = MustOpen(dir.path(), o);
  // Four segments, one per hour: seqs 1-2, 3-4, 5-6, 7-8.
  for (int h = 0; h < 4; ++h) {
    now = hour0 + h * 3600;
    ASSERT_TRUE(log->Append("a").ok());
    ASSERT_TRUE(log->Append("b").ok());
    ASSERT_TRUE(log->Sync().ok());
  }
  ASSERT_EQ(SegmentNames(dir.path()).size(), 4u);
  const int64_t later = hour0 + 3 * 3600 + 72 * 3600;  // every segment is older than 72 h

  EXPECT_EQ(*log->RemoveExpiredSegments(later), 0u);  // no cursor yet: nothing delivered

  ASSERT_TRUE(log->SetCursor("a", 6).ok());
  ASSERT_TRUE(log->SetCursor("b", 3).ok());
  ASSERT_TRUE(log->SaveCursors().ok());
  EXPECT_EQ(*log->RemoveExpiredSegments(later), 1u);  // "b" is inside the second segment
  EXPECT_EQ(SegmentNames(dir.path()).front(), "seg-00000000000000000003.log");

  ASSERT_TRUE(log->SetCursor("b", 8).ok());
  EXPECT_EQ(*log->RemoveExpiredSegments(later), 0u);  // not saved yet: the saved cursor counts
  ASSERT_TRUE(log->SaveCursors().ok());
  // "a" (6) is past the segments of 3-4 and 5-6, but the one of 5-6 is 1 s too young.
  EXPECT_EQ(*log->RemoveExpiredSegments(hour0 + 2 * 3600 + 72 * 3600 - 1), 1u);
  EXPECT_EQ(*log->RemoveExpiredSegments(later + 1000000), 1u);  // never the newest
  EXPECT_EQ(SegmentNames(dir.path()),
            std::vector<std::string>{"seg-00000000000000000007.log"});
  EXPECT_TRUE(std::filesystem::exists(dir / "realtime-shards"));

  // A reader starting before what is kept begins at the oldest record kept.
  auto all = ReadAll(*log, 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, 7u);
  Stats stats = log->GetStats();
  EXPECT_EQ(stats.segments, 1u);
  EXPECT_EQ(stats.first_seq, 7u);
}

TEST(Oplog, ReaderKeepsReadingASegmentRetentionDeleted) {
  TestDir dir;
  std::atomic<int64_t> now{3600 * 400000};
  Options o;
  o.clock = [&] { return now.load(); };
  o.retention = std::chrono::hours(1);
  // The test removes the expired segment itself; the sync thread's own periodic check
  // (it sees the same moved clock) would race it to the removal and make the count 0.
  o.retention_check_interval = std::chrono::hours(24 * 365 * 100);
  auto log = MustOpen(dir.path(), o);
  for (int h = 0; h < 3; ++h) {
    now += 3600;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->Append("h" + std::to_string(h)).ok());
    ASSERT_TRUE(log->Sync().ok());
  }
  std::unique_ptr<Reader> reader = log->NewReader();
  std::vector<Reader::Record> records;
  ASSERT_TRUE(reader->Read(0, 3, 100, &records).ok());  // all of the first segment
  ASSERT_EQ(records.back().seq, 3u);
  ASSERT_TRUE(log->SetCursor("c", 3).ok());  // this consumer's position
  ASSERT_TRUE(log->SetCursor("other", 9).ok());
  ASSERT_TRUE(log->SaveCursors().ok());
  EXPECT_EQ(*log->RemoveExpiredSegments(now + 7200), 1u);  // the reader still has it open
  std::vector<uint64_t> seqs;
  for (uint64_t after = 3;;) {
    ASSERT_TRUE(reader->Read(after, 2, 100, &records).ok());
    if (records.empty()) break;
    for (auto& r : records) seqs.push_back(r.seq);
    after = records.back().seq;
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>{4, 5, 6, 7, 8, 9}));
}

TEST(Oplog, StatsDescribeTheLog) {
  TestDir dir;
  auto log = MustOpen(dir.path());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->Append("12345").ok());
  ASSERT_TRUE(log->Sync().ok());
  Stats s = log->GetStats();
  EXPECT_EQ(s.policy, SyncPolicy::kBatch);
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.bytes, 5u * (kHeaderSize + 5));
  EXPECT_EQ(s.first_seq, 1u);
  EXPECT_EQ(s.last_seq, 5u);
  EXPECT_EQ(s.durable_seq, 5u);
  EXPECT_EQ(s.appends, 5u);
  EXPECT_GE(s.syncs, 1u);
  EXPECT_EQ(s.failed_records, 0u);
  EXPECT_GT(s.sync_latency.max_micros(), 0u);
  EXPECT_LE(s.sync_latency.Quantile(0.5), s.sync_latency.Quantile(0.99));
  EXPECT_LE(s.sync_latency.Quantile(0.99), s.sync_latency.max_micros());
  EXPECT_GE(s.durable_latency.max_micros(), s.sync_latency.Quantile(0.5));
}

}  // namespace
}  // namespace clickatron::oplog
