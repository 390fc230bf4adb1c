// Segments written into prepared (zero-filled, synced) files: what the files hold while the
// log runs, after a clean close, and after a crash; torn writes into the zeros; a full disk.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "oplog/frame.h"
#include "oplog/oplog.h"
#include "oplog/prepared_segment.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

constexpr uint64_t kSegmentBytes = 64 * 1024;
const std::string kPayload(100, 'p');  // frames of 120 bytes

// Appends (one sync each) until a record has gone into a prepared file; returns how many
// records were appended. The preparation runs on its own thread, so this polls.
uint64_t AppendUntilPrepared(Oplog& log) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  uint64_t n = 0;
  while (log.GetStats().prepared_segments == 0) {
    EXPECT_LT(std::chrono::steady_clock::now(), deadline) << "no segment was ever prepared";
    if (std::chrono::steady_clock::now() > deadline) break;
    EXPECT_TRUE(log.Append(kPayload).ok());
    EXPECT_TRUE(log.Sync().ok());
    ++n;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return n;
}

TEST(PreparedSegments, RecordsGoIntoAPreparedFileAndClosedSegmentsHoldOnlyRecords) {
  TestDir dir;
  Options o;
  o.compress = false;  // record frames: the sizes here are counted in 120-byte frames
  o.segment_bytes = kSegmentBytes;
  uint64_t n = 0;
  {
    auto opened = Oplog::Open(dir.path(), o);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    Oplog& log = **opened;
    n = AppendUntilPrepared(log);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log.Append(kPayload).ok());
    ASSERT_TRUE(log.Sync().ok());
    n += 10;
    // The newest segment is the prepared file, zeros past its records; readers and the
    // stats see only the records.
    std::vector<std::string> names = SegmentNames(dir.path());
    ASSERT_GE(names.size(), 1u);
    EXPECT_EQ(std::filesystem::file_size(dir / names.back()), kSegmentBytes);
    EXPECT_EQ(log.GetStats().bytes, n * 120);
    EXPECT_EQ(log.GetStats().prepare_error, "");
    auto all = ReadAll(log);
    ASSERT_EQ(all.size(), n);
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(all[i].first, i + 1);
    // The next file is prepared while this one is written.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(dir / kPreparedSegmentFile) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(std::filesystem::exists(dir / kPreparedSegmentFile));
  }
  // Closed: every segment holds exactly its records, and no prepared file is left behind.
  uint64_t bytes = 0;
  for (const std::string& name : SegmentNames(dir.path())) bytes += std::filesystem::file_size(dir / name);
  EXPECT_EQ(bytes, n * 120);
  EXPECT_FALSE(std::filesystem::exists(dir / kPreparedSegmentFile));
  auto again = Oplog::Open(dir.path(), o);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->recovery().records, n);
  EXPECT_EQ((*again)->recovery().trimmed_bytes, 0u);
  EXPECT_EQ((*again)->recovery().dropped_bytes, 0u);
}

TEST(PreparedSegments, ACrashLeavesZerosThatRecoveryTrimsWithoutLoss) {
  TestDir dir, crashed;
  Options o;
  o.compress = false;  // record frames: the sizes here are counted in 120-byte frames
  o.segment_bytes = kSegmentBytes;
  auto opened = Oplog::Open(dir.path(), o);
  ASSERT_TRUE(opened.ok());
  Oplog& log = **opened;
  const uint64_t n = AppendUntilPrepared(log);
  // What a kill -9 leaves: the synced files as they are, the newest one padded.
  for (const std::string& name : SegmentNames(dir.path())) {
    std::filesystem::copy_file(dir / name, crashed / name);
  }
  const std::string newest = SegmentNames(crashed.path()).back();
  ASSERT_EQ(std::filesystem::file_size(crashed / newest), kSegmentBytes);
  auto recovered = Oplog::Open(crashed.path(), o);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  const Recovery& r = (*recovered)->recovery();
  EXPECT_EQ(r.records, n);
  EXPECT_EQ(r.dropped_bytes, 0u);
  EXPECT_EQ(r.message, "");
  EXPECT_EQ(r.trimmed_bytes, kSegmentBytes - 120);  // the newest holds one record
  EXPECT_EQ(std::filesystem::file_size(crashed / newest), 120u);
  EXPECT_EQ(*(*recovered)->Append("next"), n + 1);
  ASSERT_TRUE((*recovered)->Sync().ok());
  EXPECT_EQ(ReadAll(**recovered).size(), n + 1);
}

// A write into a prepared file cut short by a crash leaves part of a frame followed by
// zeros. Every cut of the last record recovers exactly the records before it.
TEST(PreparedSegments, ATornRecordInPreparedSpaceIsCutAtEveryByte) {
  const std::vector<std::string> payloads = {"first,1\n", std::string(300, 'x'), "u|jehiah.c3p1,4\n"};
  std::string records;
  for (size_t i = 0; i < payloads.size(); ++i) AppendFrame(i + 1, payloads[i], &records);
  const size_t last_size = kHeaderSize + payloads.back().size();
  const size_t last_start = records.size() - last_size;
  for (size_t cut = last_start; cut < records.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    TestDir dir;
    std::string file = records.substr(0, cut);
    file.resize(4096, '\0');
    WriteBytes(dir / SegmentFileName(1), file);
    auto log = Oplog::Open(dir.path(), PlainSegments());
    ASSERT_TRUE(log.ok()) << log.status().message();
    const Recovery& r = (*log)->recovery();
    EXPECT_EQ(r.records, 2u);
    EXPECT_EQ(r.dropped_records, cut > last_start ? 1u : 0u);
    EXPECT_EQ(r.dropped_bytes, cut > last_start ? last_size : 0u);
    EXPECT_EQ(r.trimmed_bytes, 4096 - (cut > last_start ? records.size() : last_start));
    EXPECT_EQ(std::filesystem::file_size(dir / SegmentFileName(1)), last_start);
    auto all = ReadAll(**log);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].second, payloads[1]);
  }
}

TEST(PreparedSegments, DamageBeforeTheZerosIsStillAHardError) {
  TestDir dir;
  std::string file;
  AppendFrame(1, "a,1\n", &file);
  const size_t second = file.size();
  AppendFrame(2, "bb,2\n", &file);
  AppendFrame(3, "ccc,3\n", &file);
  file[second + kHeaderSize] ^= 0x10;  // a bit of record 2's payload
  file.resize(4096, '\0');
  WriteBytes(dir / SegmentFileName(1), file);
  auto log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("at offset " + std::to_string(second) +
                                        " is corrupt: bad checksum (seq 2), and whole records follow it"),
            std::string::npos)
      << log.status().message();
}

// The space of a prepared file is the log's already: a full disk does not stop the records
// that fit in it. Past it, the next segment cannot be prepared or grown, appends fail
// (never a false success), and they work again once space returns.
TEST(PreparedSegments, AFullDiskStopsAppendsOnlyPastThePreparedFile) {
  TestDir dir;
  const std::string mnt = dir / "small";
  SmallFilesystem fs(mnt, "1m");
  if (!fs.error().empty()) GTEST_SKIP() << "cannot mount a tmpfs here (" << fs.error() << ")";
  const std::string logdir = mnt + "/oplog";
  Options o;
  o.compress = false;  // record frames: the sizes here are counted in 120-byte frames
  o.segment_bytes = 128 * 1024;  // 1 MiB free is room for 4 of them: one is prepared
  auto opened = Oplog::Open(logdir, o);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Oplog& log = **opened;
  const uint64_t before = AppendUntilPrepared(log);
  ASSERT_EQ(log.GetStats().prepared_segments, 1u);
  {
    std::ofstream filler(mnt + "/filler", std::ios::binary);
    const std::string block(4096, 'f');
    for (int i = 0; i < 512 && filler.good(); ++i) filler.write(block.data(), block.size());
  }
  // The prepared segment holds 1092 frames of 120 bytes; all of them still fit.
  uint64_t stored = before, failed = 0;
  for (int i = 0; i < 10000 && failed == 0; ++i) {
    const uint64_t seq = *log.Append(kPayload);
    if (log.Sync().ok()) {
      ++stored;
    } else {
      failed = seq;
    }
  }
  ASSERT_NE(failed, 0u) << "the full filesystem accepted every write";
  EXPECT_GE(stored - before + 1, o.segment_bytes / 120) << "a write inside the prepared file failed";
  EXPECT_NE(log.GetStats().last_error.find("No space left on device"), std::string::npos)
      << log.GetStats().last_error;
  std::filesystem::remove(mnt + "/filler");
  const uint64_t back = *log.Append(kPayload);
  ASSERT_TRUE(log.Sync().ok());
  EXPECT_EQ(log.durable_seq(), back);
  EXPECT_EQ(ReadAll(log).size(), stored + 1);
}

}  // namespace
}  // namespace clickatron::oplog
