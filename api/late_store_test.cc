#include "api/late_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/test_dir.h"
#include "keyformat/ymdh.h"
#include "oplog/frame.h"

namespace clickatron {
namespace {

const int64_t kDay = *ParseDay("2026-11-20");

LatePart Part(uint32_t shard, int64_t day, uint64_t seq, std::string_view lookups, std::string_view counters,
              uint64_t records = 1) {
  LatePart p;
  p.shard = shard;
  p.day = day;
  p.seq = seq;
  p.records = records;
  p.lookups = lookups;
  p.counters = counters;
  return p;
}

std::unique_ptr<LateStore> OpenStore(const TestDir& dir) {
  Result<std::unique_ptr<LateStore>> s = LateStore::Open(dir.path());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

struct Read {
  uint64_t id;
  uint32_t shard;
  std::string day;
  uint64_t seq, records;
  std::string lookups, counters;
  bool operator==(const Read&) const = default;
};

std::vector<Read> ReadAll(const LateStore& store, uint64_t after = 0, size_t max_bytes = 1 << 20,
                          bool* more = nullptr) {
  std::vector<Read> out;
  bool m = false;
  Status s = store.ReadAfter(
      after, max_bytes,
      [&](const LateEntry& e) {
        out.push_back(Read{e.id, e.part.shard, FormatDay(e.part.day), e.part.seq, e.part.records,
                           std::string(e.part.lookups), std::string(e.part.counters)});
        return Status::OK();
      },
      &m);
  EXPECT_TRUE(s.ok()) << s.message();
  if (more) *more = m;
  return out;
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

uint64_t FileSize(const std::string& path) { return std::filesystem::file_size(path); }

TEST(LateStore, AppendsReadsBackAndReopens) {
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    EXPECT_EQ(store->recovery(), "");
    Result<uint64_t> a = store->Append(Part(0, kDay, 7, "_l|AAAAAAAAAAA=,http://a/\n", "u|x.c41l,3\nu|y.c41l,-1\n", 4));
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(*a, 1u);
    Result<uint64_t> b = store->Append(Part(1, kDay + 1, 9, "", "u|z.c41m,5\n"));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*b, 2u);
    const LateStoreStats st = store->Stats();
    EXPECT_EQ(st.entries, 2u);
    EXPECT_EQ(st.lines, 4u);
    EXPECT_EQ(st.first_id, 1u);
    EXPECT_EQ(st.last_id, 2u);
    EXPECT_EQ(st.oldest_pending_day, kDay);
    EXPECT_EQ(st.appended, 2u);
    EXPECT_EQ(st.bytes, FileSize(dir / "late.log"));
  }
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  const std::vector<Read> want = {
      {1, 0, "2026-11-20", 7, 4, "_l|AAAAAAAAAAA=,http://a/\n", "u|x.c41l,3\nu|y.c41l,-1\n"},
      {2, 1, "2026-11-21", 9, 1, "", "u|z.c41m,5\n"}};
  EXPECT_EQ(ReadAll(*store), want);
  EXPECT_EQ(ReadAll(*store, 1), std::vector<Read>{want[1]});
  EXPECT_TRUE(ReadAll(*store, 2).empty());
  EXPECT_EQ(store->Mark(0, kDay), 7u);
  EXPECT_EQ(store->Mark(1, kDay + 1), 9u);
  EXPECT_EQ(store->Mark(1, kDay), 0u);
  EXPECT_EQ(store->Stats().appended, 0u);  // per process
  // The next id follows the last.
  Result<uint64_t> c = store->Append(Part(0, kDay, 8, "", "u|x.c41l,1\n"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 3u);
}

TEST(LateStore, ANewStoreStartsItsIdsAtTheFirstIdItIsGiven) {
  TestDir dir;
  const uint64_t first = uint64_t(1795000000) << 20;  // what the API gives: unix seconds << 20
  {
    Result<std::unique_ptr<LateStore>> store = LateStore::Open(dir.path(), first);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ((*store)->Stats().last_id, first - 1);  // none given yet, kept in the file
  }
  {
    // Reopened (given another first id: an existing store keeps its own).
    Result<std::unique_ptr<LateStore>> store = LateStore::Open(dir.path(), first + 5000);
    ASSERT_TRUE(store.ok());
    EXPECT_EQ((*store)->Stats().last_id, first - 1);
    Result<uint64_t> id = (*store)->Append(Part(0, kDay, 7, "", "u|x.c41l,3\n"));
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, first);
    EXPECT_EQ(ReadAll(**store, first - 1).size(), 1u);
  }
  // A store made anew at the same place (the file lost) starts above every id before.
  std::filesystem::remove(dir / "late.log");
  Result<std::unique_ptr<LateStore>> store = LateStore::Open(dir.path(), first + (uint64_t(3600) << 20));
  ASSERT_TRUE(store.ok());
  Result<uint64_t> id = (*store)->Append(Part(0, kDay, 7, "", "u|x.c41l,3\n"));
  ASSERT_TRUE(id.ok());
  EXPECT_GT(*id, first);
}

TEST(LateStore, FileFormatIsFramedText) {
  TestDir dir;
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Append(Part(2, kDay, 11, "_l|B,b\n", "u|b.c41l,2\n", 3)).ok());
  const std::string bytes = FileBytes(dir / "late.log");
  oplog::Frame frame;
  ASSERT_EQ(oplog::DecodeFrame(bytes, &frame), oplog::FrameState::kOk);
  EXPECT_EQ(frame.seq, 1u);
  EXPECT_EQ(frame.size, bytes.size());
  EXPECT_EQ(frame.payload,
            "late-entry shard=2 day=2026-11-20 seq=11 records=3 lookups=1 counters=1\n"
            "_l|B,b\n"
            "u|b.c41l,2\n");
}

TEST(LateStore, SkipsAPartAlreadyStoredPerShardAndDay) {
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    ASSERT_EQ(*store->Append(Part(0, kDay, 10, "", "u|a.c41l,1\n")), 1u);
    // The same round again (a re-send), or an older one: skipped.
    EXPECT_EQ(*store->Append(Part(0, kDay, 10, "", "u|a.c41l,1\n")), 0u);
    EXPECT_EQ(*store->Append(Part(0, kDay, 9, "", "u|a.c41l,1\n")), 0u);
    // Another day or another shard with the same seq: its own mark.
    EXPECT_EQ(*store->Append(Part(0, kDay + 1, 10, "", "u|a.c41m,1\n")), 2u);
    EXPECT_EQ(*store->Append(Part(1, kDay, 10, "", "u|a.c41l,1\n")), 3u);
    EXPECT_EQ(*store->Append(Part(0, kDay, 11, "", "u|a.c41l,1\n")), 4u);
    EXPECT_EQ(store->Stats().duplicate_parts, 2u);
    EXPECT_EQ(store->Stats().entries, 4u);
  }
  // After a restart too.
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->Append(Part(0, kDay, 11, "", "u|a.c41l,1\n")), 0u);
  EXPECT_EQ(*store->Append(Part(1, kDay, 10, "", "u|a.c41l,1\n")), 0u);
  EXPECT_EQ(store->Stats().entries, 4u);
}

TEST(LateStore, CutsATornTailAndReportsIt) {
  TestDir dir;
  uint64_t whole = 0;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1\n")).ok());
    ASSERT_TRUE(store->Append(Part(0, kDay, 2, "", "u|b.c41l,2\n")).ok());
    whole = FileSize(dir / "late.log");
    ASSERT_TRUE(store->Append(Part(0, kDay, 3, "", "u|c.c41l,3\n")).ok());
  }
  // The third append cut short, as a crash in the middle of its write leaves it.
  const uint64_t full = FileSize(dir / "late.log");
  ASSERT_EQ(::truncate((dir / "late.log").c_str(), off_t(full - 5)), 0);
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    EXPECT_EQ(store->recovery(), "cut a torn tail of " + std::to_string(full - 5 - whole) + " bytes at offset " +
                                     std::to_string(whole) + " (frame cut short)");
    EXPECT_EQ(FileSize(dir / "late.log"), whole);
    EXPECT_EQ(ReadAll(*store).size(), 2u);
    // Its part was not stored: the re-send is.
    EXPECT_EQ(store->Mark(0, kDay), 2u);
    EXPECT_EQ(*store->Append(Part(0, kDay, 3, "", "u|c.c41l,3\n")), 3u);
  }
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->recovery(), "");
  EXPECT_EQ(ReadAll(*store).back().counters, "u|c.c41l,3\n");
}

TEST(LateStore, CutsATailWithABadChecksumOrZeros) {
  for (const std::string& tail : {std::string(30, '\0'), std::string("\x05\0\0\0", 4)}) {
    TestDir dir;
    {
      auto store = OpenStore(dir);
      ASSERT_TRUE(store);
      ASSERT_TRUE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1\n")).ok());
    }
    const uint64_t whole = FileSize(dir / "late.log");
    std::ofstream(dir / "late.log", std::ios::binary | std::ios::app).write(tail.data(), std::streamsize(tail.size()));
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    EXPECT_NE(store->recovery(), "");
    EXPECT_EQ(FileSize(dir / "late.log"), whole);
    EXPECT_EQ(ReadAll(*store).size(), 1u);
  }
  // A flipped byte in the last frame's payload: a bad checksum, cut.
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1\n")).ok());
    ASSERT_TRUE(store->Append(Part(0, kDay, 2, "", "u|b.c41l,1\n")).ok());
  }
  std::string bytes = FileBytes(dir / "late.log");
  bytes[bytes.size() - 3] ^= 1;
  dir.Write("late.log", bytes);
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_NE(store->recovery().find("(bad checksum)"), std::string::npos) << store->recovery();
  EXPECT_EQ(ReadAll(*store).size(), 1u);
}

TEST(LateStore, DamageBeforeAWholeFrameIsRefusedNotCut) {
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1\n")).ok());
    ASSERT_TRUE(store->Append(Part(0, kDay, 2, "", "u|b.c41l,1\n")).ok());
  }
  std::string bytes = FileBytes(dir / "late.log");
  bytes[oplog::kHeaderSize + 2] ^= 1;  // inside the first frame's payload
  dir.Write("late.log", bytes);
  Result<std::unique_ptr<LateStore>> s = LateStore::Open(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), dir / "late.log" + ": bad checksum at offset 0, with a whole frame at offset " +
                                       std::to_string(bytes.size() / 2) +
                                       " after it: damaged, not a torn append (move the file away to start)");
  EXPECT_EQ(FileBytes(dir / "late.log"), bytes);  // nothing cut
}

TEST(LateStore, AFrameThatDoesNotParseIsRefused) {
  TestDir dir;
  std::string bytes;
  oplog::AppendFrame(1, "late-entry shard=0 day=2026-11-20 seq=1 records=1 lookups=0 counters=2\nu|a,1\n", &bytes);
  dir.Write("late.log", bytes);
  Result<std::unique_ptr<LateStore>> s = LateStore::Open(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            dir / "late.log" + " at offset 0: entry body does not hold 0 lookup and 2 counter lines");
  bytes.clear();
  oplog::AppendFrame(1, "late-entry shard=0 day=2026-13-20 seq=1 records=1 lookups=0 counters=0\n", &bytes);
  dir.Write("late.log", bytes);
  s = LateStore::Open(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("day '2026-13-20' is not YYYY-MM-DD"), std::string::npos) << s.status().message();
}

TEST(LateStore, ReleaseRewritesKeepsIdsAndMarks) {
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    for (uint64_t seq = 1; seq <= 3; seq++) {
      ASSERT_TRUE(store->Append(Part(0, kDay + int64_t(seq), seq, "", "u|k.c41l," + std::to_string(seq) + "\n")).ok());
    }
    // Nothing to release: nothing written.
    const std::string before = FileBytes(dir / "late.log");
    Result<LateRelease> none = store->ReleaseThrough(0);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->released_entries, 0u);
    EXPECT_EQ(FileBytes(dir / "late.log"), before);

    Result<LateRelease> r = store->ReleaseThrough(2);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->released_entries, 2u);
    EXPECT_EQ(r->entries, 1u);
    EXPECT_FALSE(std::filesystem::exists(dir / "late.log.tmp"));
    LateStoreStats st = store->Stats();
    EXPECT_EQ(st.entries, 1u);
    EXPECT_EQ(st.first_id, 3u);
    EXPECT_EQ(st.last_id, 3u);
    EXPECT_EQ(st.oldest_pending_day, kDay + 3);
    EXPECT_EQ(st.released_through, 2u);
    EXPECT_EQ(st.bytes, FileSize(dir / "late.log"));
    EXPECT_EQ(ReadAll(*store).size(), 1u);
    EXPECT_EQ(ReadAll(*store)[0].counters, "u|k.c41l,3\n");
    // The marks of released entries still skip their re-sends; ids go on.
    EXPECT_EQ(*store->Append(Part(0, kDay + 1, 1, "", "u|k.c41l,1\n")), 0u);
    EXPECT_EQ(*store->Append(Part(0, kDay + 1, 4, "", "u|k.c41l,4\n")), 4u);
  }
  {
    // Reopened: the state frame holds the next id and the marks.
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    EXPECT_EQ(store->recovery(), "");
    EXPECT_EQ(store->Mark(0, kDay + 2), 2u);
    EXPECT_EQ(*store->Append(Part(0, kDay + 2, 2, "", "u|k.c41l,2\n")), 0u);
    const std::vector<Read> all = ReadAll(*store);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].id, 3u);
    EXPECT_EQ(all[1].id, 4u);
    // Releasing everything leaves the state alone; ids still go on after a reopen.
    Result<LateRelease> r = store->ReleaseThrough(4);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->released_entries, 2u);
    EXPECT_EQ(r->entries, 0u);
    EXPECT_EQ(store->Stats().oldest_pending_day, -1);
    // Idempotent.
    EXPECT_EQ(store->ReleaseThrough(4)->released_entries, 0u);
  }
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->Stats().entries, 0u);
  EXPECT_EQ(store->Stats().last_id, 4u);
  EXPECT_EQ(store->Stats().first_id, 0u);
  EXPECT_EQ(*store->Append(Part(0, kDay + 1, 4, "", "u|k.c41l,4\n")), 0u);
  EXPECT_EQ(*store->Append(Part(0, kDay + 9, 1, "", "u|k.c41m,4\n")), 5u);
  const std::string bytes = FileBytes(dir / "late.log");
  oplog::Frame frame;
  ASSERT_EQ(oplog::DecodeFrame(bytes, &frame), oplog::FrameState::kOk);
  EXPECT_EQ(frame.seq, 5u);
  EXPECT_EQ(frame.payload,
            "late-state next_id=5 released_through=4 marks=3\n"
            "0 2026-11-21 4\n"
            "0 2026-11-22 2\n"
            "0 2026-11-23 3\n");
}

TEST(LateStore, ReleaseDropsMarksOlderThanTheWindow) {
  TestDir dir;
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Append(Part(0, kDay, 5, "", "u|a.c41l,1\n")).ok());
  ASSERT_TRUE(store->Append(Part(0, kDay + LateStore::kMarkDays + 1, 6, "", "u|a.c41l,1\n")).ok());
  ASSERT_TRUE(store->ReleaseThrough(2).ok());
  EXPECT_EQ(store->Mark(0, kDay), 0u);
  EXPECT_EQ(store->Mark(0, kDay + LateStore::kMarkDays + 1), 6u);
}

TEST(LateStore, ALeftoverRewriteCopyIsRemoved) {
  TestDir dir;
  {
    auto store = OpenStore(dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1\n")).ok());
  }
  dir.Write("late.log.tmp", "half a rewrite");
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_FALSE(std::filesystem::exists(dir / "late.log.tmp"));
  EXPECT_EQ(ReadAll(*store).size(), 1u);
}

TEST(LateStore, ReadAfterIsBoundedByBytesButTakesOneEntryAtLeast) {
  TestDir dir;
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  const std::string line = "u|" + std::string(100, 'x') + ".c41l,1\n";
  for (uint64_t seq = 1; seq <= 5; seq++) ASSERT_TRUE(store->Append(Part(0, kDay, seq, "", line)).ok());
  bool more = false;
  std::vector<Read> got = ReadAll(*store, 0, 10, &more);  // smaller than one entry
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(more);
  got = ReadAll(*store, 1, 500, &more);  // about two and a half entries
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 2u);
  EXPECT_TRUE(more);
  got = ReadAll(*store, 3, 1 << 20, &more);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(more);
}

TEST(LateStore, RefusesLinesWithoutTheirNewline) {
  TestDir dir;
  auto store = OpenStore(dir);
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->Append(Part(0, kDay, 1, "", "u|a.c41l,1")).ok());
  EXPECT_FALSE(store->Append(Part(0, kDay, 0, "", "u|a.c41l,1\n")).ok());
  EXPECT_EQ(store->Stats().entries, 0u);
  EXPECT_EQ(store->Stats().bytes, 0u);
}

}  // namespace
}  // namespace clickatron
