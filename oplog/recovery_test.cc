// Recovery: torn tails are cut to exactly the records before them; damage anywhere else is
// a hard error naming the file and the offset.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/read_file.h"
#include "oplog/frame.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

std::string Bytes(const std::string& path) {
  std::string bytes;
  EXPECT_TRUE(ReadFile(path, &bytes).ok());
  return bytes;
}

// A one-segment log of `payloads`, written through Oplog; returns the segment's bytes.
std::string MakeLog(const std::string& dir, const std::vector<std::string>& payloads) {
  auto log = Oplog::Open(dir, PlainSegments());
  EXPECT_TRUE(log.ok());
  for (const std::string& p : payloads) EXPECT_TRUE((*log)->Append(p).ok());
  EXPECT_TRUE((*log)->Sync().ok());
  return Bytes(dir + "/" + SegmentFileName(1));
}

const std::vector<std::string> kPayloads = {"first,1\n", "second record,22\n",
                                            std::string(300, 'x'), "u|jehiah.c3p1,4\n"};

TEST(Recovery, TornTailAtEveryByteOfTheLastRecordRecoversTheRecordsBeforeIt) {
  TestDir src;
  const std::string whole = MakeLog(src.path(), kPayloads);
  const size_t last_start = whole.size() - (kHeaderSize + kPayloads.back().size());
  for (size_t cut = last_start; cut < whole.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    TestDir dir;
    WriteBytes(dir / SegmentFileName(1), std::string_view(whole).substr(0, cut));
    Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
    ASSERT_TRUE(log.ok()) << log.status().message();
    const Recovery& r = (*log)->recovery();
    EXPECT_EQ(r.records, 3u);
    EXPECT_EQ(r.last_seq, 3u);
    EXPECT_EQ(r.dropped_bytes, cut - last_start);
    EXPECT_EQ(r.dropped_records, cut > last_start ? 1u : 0u);
    if (cut > last_start) {
      EXPECT_NE(r.message.find("off " + (dir / SegmentFileName(1)) + " at offset " +
                               std::to_string(last_start)),
                std::string::npos)
          << r.message;
    }
    EXPECT_EQ(std::filesystem::file_size(dir / SegmentFileName(1)), last_start);
    auto all = ReadAll(**log);
    ASSERT_EQ(all.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(all[i], std::make_pair(uint64_t{i + 1}, kPayloads[i]));
    // The log goes on from there.
    ASSERT_EQ(*(*log)->Append("next"), 4u);
    ASSERT_TRUE((*log)->Sync().ok());
    EXPECT_EQ(ReadAll(**log, 3), (std::vector<std::pair<uint64_t, std::string>>{{4, "next"}}));
  }
}

TEST(Recovery, EveryBitFlipIsDetected) {
  TestDir src;
  const std::vector<std::string> payloads = {"a,1\n", "bb,2\n", "ccc,3\n"};
  const std::string whole = MakeLog(src.path(), payloads);
  const size_t second = kHeaderSize + payloads[0].size();
  const size_t third = second + kHeaderSize + payloads[1].size();
  for (size_t bit = 0; bit < whole.size() * 8; ++bit) {
    SCOPED_TRACE("bit " + std::to_string(bit));
    std::string flipped = whole;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    TestDir dir;
    const std::string path = dir / SegmentFileName(1);
    WriteBytes(path, flipped);
    Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
    const size_t byte = bit / 8;
    if (byte >= third) {
      // In the last record: a torn or corrupt tail, cut and reported.
      ASSERT_TRUE(log.ok()) << log.status().message();
      EXPECT_EQ((*log)->recovery().records, 2u);
      EXPECT_EQ((*log)->recovery().dropped_bytes, whole.size() - third);
      // Counted by following the lengths in the tail, so a damaged length may count more.
      EXPECT_GE((*log)->recovery().dropped_records, 1u);
      EXPECT_EQ(ReadAll(**log).size(), 2u);
    } else {
      ASSERT_FALSE(log.ok()) << "a damaged record before the tail was not refused";
      const size_t at = byte >= second ? second : 0;
      EXPECT_NE(log.status().message().find("oplog segment " + path + " at offset " +
                                            std::to_string(at) + " is corrupt"),
                std::string::npos)
          << log.status().message();
      EXPECT_EQ(Bytes(path), flipped);  // refused, and changed nothing
    }
  }
}

TEST(Recovery, DamageInAnOlderSegmentIsAHardError) {
  TestDir dir;
  std::string first, second;
  AppendFrame(1, "one", &first);
  AppendFrame(2, "two", &first);
  AppendFrame(3, "three", &second);
  first.pop_back();  // the older segment's last record is cut short
  WriteBytes(dir / SegmentFileName(1), first);
  WriteBytes(dir / SegmentFileName(3), second);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "oplog segment " + (dir / SegmentFileName(1)) + " at offset 23 is corrupt: "
            "frame cut short (seq 2) (only the newest segment may end in a torn record)");
}

TEST(Recovery, RecordsOutOfOrderAreAHardError) {
  TestDir dir;
  std::string bytes;
  AppendFrame(1, "one", &bytes);
  AppendFrame(2, "two", &bytes);
  AppendFrame(2, "two again", &bytes);
  WriteBytes(dir / SegmentFileName(1), bytes);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "oplog segment " + (dir / SegmentFileName(1)) + " at offset 46 is corrupt: record "
            "seq 2 is out of order (after seq 2, segment starts at seq 1)");
}

TEST(Recovery, ARecordBelowItsSegmentNameIsAHardError) {
  TestDir dir;
  std::string a, b;
  AppendFrame(1, "one", &a);
  AppendFrame(5, "five", &a);
  AppendFrame(6, "six", &b);
  WriteBytes(dir / SegmentFileName(1), a);
  WriteBytes(dir / SegmentFileName(5), b);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), "oplog segment " + (dir / SegmentFileName(1)) +
                                        " holds seq 5, which the next segment's name (seq 5) "
                                        "says it cannot");
}

TEST(Recovery, AWholeGarbageTailIsCut) {
  TestDir dir;
  std::string bytes;
  AppendFrame(1, "one", &bytes);
  const size_t good = bytes.size();
  bytes += std::string(4096, '\xab');  // a filesystem that grew the file but kept junk
  WriteBytes(dir / SegmentFileName(1), bytes);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().dropped_bytes, 4096u);
  EXPECT_EQ((*log)->recovery().trimmed_bytes, 0u);
  EXPECT_EQ(std::filesystem::file_size(dir / SegmentFileName(1)), good);
  EXPECT_EQ(*(*log)->Append("two"), 2u);
}

// Zeros after the last record are the unwritten rest of a prepared segment (or a file grown
// without its data): never an acknowledged record, so trimmed without a report of loss.
TEST(Recovery, AZeroTailIsTrimmedNotReportedAsLoss) {
  TestDir dir;
  std::string bytes;
  AppendFrame(1, "one", &bytes);
  const size_t good = bytes.size();
  bytes += std::string(4096, '\0');
  WriteBytes(dir / SegmentFileName(1), bytes);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().dropped_bytes, 0u);
  EXPECT_EQ((*log)->recovery().trimmed_bytes, 4096u);
  EXPECT_EQ((*log)->recovery().message, "");
  EXPECT_EQ(std::filesystem::file_size(dir / SegmentFileName(1)), good);
  EXPECT_EQ(*(*log)->Append("two"), 2u);
}

TEST(Recovery, EmptyNewestSegmentIsFineAndNotReused) {
  TestDir dir;
  std::string bytes;
  AppendFrame(1, "one", &bytes);
  WriteBytes(dir / SegmentFileName(1), bytes);
  WriteBytes(dir / SegmentFileName(2), "");  // created, then the process died
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().segments, 2u);
  ASSERT_EQ(*(*log)->Append("three"), 3u);  // above the empty segment's name
  ASSERT_TRUE((*log)->Sync().ok());
  EXPECT_EQ(ReadAll(**log), (std::vector<std::pair<uint64_t, std::string>>{{1, "one"}, {3, "three"}}));
}

}  // namespace
}  // namespace clickatron::oplog
