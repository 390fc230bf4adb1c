// Compressed batches (batch.h): the writer's frames, recovery of a torn or damaged batch,
// readers stopping inside one, and logs written before batches existed (format version 1).
#include "base/read_file.h"
#include "oplog/batch.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "oplog/frame.h"
#include "oplog/inspect.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

using Records = std::vector<std::pair<uint64_t, std::string>>;

std::string Bytes(const std::string& path) {
  std::string bytes;
  EXPECT_TRUE(ReadFile(path, &bytes).ok());
  return bytes;
}

// API-like payloads: a few lines of one event each, so a batch compresses.
std::string Payload(uint64_t i) {
  const std::string user = "u" + std::to_string(i % 37);
  return "0 20782 u|" + user + ".qbpk,1\n1 20782 c.u|" + user + ".DE.qbpk,1\n1 20782 r.u|" +
         user + ".direct.qbpk," + std::to_string(i) + "\n";
}

// Appends records first..last through Oplog (compressed batches) and syncs.
void Append(Oplog& log, uint64_t first, uint64_t last) {
  for (uint64_t i = first; i <= last; ++i) ASSERT_EQ(*log.Append(Payload(i)), i);
  ASSERT_TRUE(log.Sync().ok());
}

Records Expected(uint64_t first, uint64_t last) {
  Records r;
  for (uint64_t i = first; i <= last; ++i) r.emplace_back(i, Payload(i));
  return r;
}

// The offsets of the frames of a segment and whether each is a batch.
std::vector<std::pair<size_t, bool>> FrameOffsets(std::string_view bytes) {
  std::vector<std::pair<size_t, bool>> frames;
  Frame frame;
  for (size_t at = 0; at < bytes.size() && DecodeLogFrame(bytes.substr(at), &frame) == FrameState::kOk;
       at += frame.size) {
    frames.emplace_back(at, frame.batch);
  }
  return frames;
}

// Whether a segment holds a batch frame (how the sync thread cut its group commits is up to
// the timing: a commit of a few records stays record frames).
bool AnyBatch(std::string_view bytes) {
  for (const auto& [offset, batch] : FrameOffsets(bytes)) {
    if (batch) return true;
  }
  return false;
}

TEST(Batch, EncoderRoundTripsAndCutsLargeRunsIntoBodies) {
  std::string frames, encoded;
  size_t plain = 0;
  for (uint64_t i = 1; i <= 9000; ++i) AppendFrame(i * 3, Payload(i), &frames);
  plain = frames.size();
  BatchEncoder encoder;
  encoder.Encode(frames, &encoded);
  EXPECT_LT(encoded.size() * 4, plain);  // text of repeated keys: well over 4x
  const auto offsets = FrameOffsets(encoded);
  ASSERT_GE(offsets.size(), 2u);  // ~800 KB of body: more than one kTargetBatchBody
  uint64_t n = 0;
  Result<SegmentScan> scan = ScanSegmentBytes(
      {1, "seg"}, encoded, 0, [&](uint64_t seq, std::string_view payload, uint64_t) {
        ++n;
        EXPECT_EQ(seq, n * 3);
        EXPECT_EQ(payload, Payload(n));
      });
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  EXPECT_EQ(n, 9000u);
  EXPECT_EQ(scan->valid_bytes, encoded.size());
}

TEST(Batch, SmallOrIncompressibleRunsStayRecordFrames) {
  std::string frames, encoded;
  AppendFrame(1, "a,1\n", &frames);
  AppendFrame(2, "b,2\n", &frames);
  BatchEncoder encoder;
  encoder.Encode(frames, &encoded);
  EXPECT_EQ(encoded, frames);  // under kMinBatchInput
  frames.clear();
  std::string noise;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 4000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    noise.push_back(static_cast<char>(x));
  }
  AppendFrame(1, noise, &frames);
  encoder.Encode(frames, &encoded);
  EXPECT_EQ(encoded, frames);  // would not shrink
}

TEST(Batch, TheLogWritesBatchesAndReadersStopInsideThem) {
  TestDir dir;
  auto log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_TRUE(log.ok());
  Append(**log, 1, 500);
  const std::string bytes = Bytes(dir / SegmentFileName(1));
  EXPECT_TRUE(AnyBatch(bytes));
  EXPECT_EQ((*log)->GetStats().bytes, bytes.size());
  // Batches of 7 and of 1 record: every read but a few ends inside a batch.
  EXPECT_EQ(ReadAll(**log), Expected(1, 500));
  EXPECT_EQ(ReadAll(**log, 0, 1), Expected(1, 500));
  EXPECT_EQ(ReadAll(**log, 250, 13), Expected(251, 500));
  // Reopened, recovery reads the batches and the seqs go on.
  log = Status::Error("closed");
  log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().records, 500u);
  EXPECT_EQ((*log)->recovery().last_seq, 500u);
  Append(**log, 501, 600);
  EXPECT_EQ(ReadAll(**log, 0, 64), Expected(1, 600));
  LogCheck check = CheckLog(dir.path(), nullptr);
  EXPECT_TRUE(check.error.ok()) << check.error.message();
  EXPECT_EQ(check.records, 600u);
}

// The API's sender reads a round from its cursor and, when the round ends before the last
// record it was handed, asks again from there: a step back inside the open segment. Each
// such step must cost the batch it lands in, not a walk that decompresses every batch from
// the top of the segment (which made the sender's CPU per event grow with the segment: 61 %
// of the API's CPU in zstd under batched load, 4x the CPU per event of the log before).
TEST(Batch, AReaderSteppingBackDecompressesOnlyTheBatchItLandsIn) {
  TestDir dir;
  auto log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_TRUE(log.ok());
  for (uint64_t commit = 0; commit < 200; ++commit) Append(**log, commit * 50 + 1, commit * 50 + 50);
  size_t batches = 0;
  for (const auto& [offset, batch] : FrameOffsets(Bytes(dir / SegmentFileName(1)))) batches += batch;
  ASSERT_GE(batches, 150u);  // group commits of 50 records are batches (a few may be split)

  std::unique_ptr<Reader> reader = (*log)->NewReader();
  std::vector<Reader::Record> records;
  Records got;
  uint64_t cursor = 0;
  size_t reads = 0;
  for (;;) {
    ASSERT_TRUE(reader->Read(cursor, 120, 1 << 20, &records).ok());
    ++reads;
    if (records.empty()) break;
    // Keep all but the last 37 handed out (the sender's round ended there); ask again.
    const size_t keep = records.size() > 37 ? records.size() - 37 : records.size();
    for (size_t i = 0; i < keep; ++i) got.emplace_back(records[i].seq, std::string(records[i].payload));
    cursor = records[keep - 1].seq;
  }
  EXPECT_EQ(got, Expected(1, 10000));
  EXPECT_GT(reads, 100u);
  // Each batch is decompressed when a read first walks into it and at most once more when a
  // read steps back into it; never the segment from its start again (~reads * batches / 2).
  EXPECT_LE(reader->batches_decompressed(), 2 * batches) << reads << " reads, " << batches << " batches";
}

TEST(Batch, CompressOffWritesRecordFrames) {
  TestDir dir;
  Options o = PlainSegments();
  o.compress = false;
  auto log = Oplog::Open(dir.path(), o);
  ASSERT_TRUE(log.ok());
  Append(**log, 1, 100);
  for (const auto& [offset, batch] : FrameOffsets(Bytes(dir / SegmentFileName(1)))) EXPECT_FALSE(batch);
  EXPECT_EQ(ReadAll(**log), Expected(1, 100));
}

// A segment of two group commits of 100 records each, as the sync thread writes them (two
// batch frames); returns its bytes and the offset of the second frame.
std::string TwoBatches(size_t* second) {
  BatchEncoder encoder;
  std::string bytes, frames, encoded;
  for (uint64_t first : {1, 101}) {
    frames.clear();
    for (uint64_t i = first; i < first + 100; ++i) AppendFrame(i, Payload(i), &frames);
    encoder.Encode(frames, &encoded);
    if (first == 101) *second = bytes.size();
    bytes += encoded;
  }
  const auto offsets = FrameOffsets(bytes);
  EXPECT_EQ(offsets.size(), 2u);
  EXPECT_TRUE(offsets.size() == 2 && offsets[0].second && offsets[1].second);
  return bytes;
}

TEST(Batch, ATornBatchAtTheTailIsCutAndReported) {
  size_t second = 0;
  const std::string whole = TwoBatches(&second);
  ASSERT_GT(second, 0u);
  // Every cut inside the last batch frame (a few hundred bytes: all of them).
  for (size_t cut = second + 1; cut < whole.size(); ++cut) {
    TestDir dir;
    const std::string path = dir / SegmentFileName(1);
    WriteBytes(path, whole.substr(0, cut));
    Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), PlainSegments());
    ASSERT_TRUE(log.ok()) << "cut " << cut << ": " << log.status().message();
    const Recovery& r = (*log)->recovery();
    EXPECT_EQ(r.records, 100u);
    EXPECT_EQ(r.last_seq, 100u);
    EXPECT_EQ(r.dropped_bytes, cut - second);
    EXPECT_EQ(r.dropped_records, 1u);
    EXPECT_NE(r.message.find(path + " at offset " + std::to_string(second)), std::string::npos)
        << r.message;
    EXPECT_EQ(std::filesystem::file_size(path), second);
    EXPECT_EQ(ReadAll(**log), Expected(1, 100));
    EXPECT_EQ(*(*log)->Append("next"), 101u);  // the cut batch's seqs were never acknowledged
  }
}

TEST(Batch, DamageInsideABatchIsAHardErrorNamingFileAndOffset) {
  size_t second = 0;
  const std::string whole = TwoBatches(&second);
  ASSERT_GT(second, 0u);
  // Every byte of the first batch's compressed block, with a whole batch after it.
  for (size_t at = kHeaderSize; at < second; ++at) {
    TestDir dir;
    const std::string path = dir / SegmentFileName(1);
    std::string flipped = whole;
    flipped[at] ^= 0x20;
    WriteBytes(path, flipped);
    Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), PlainSegments());
    ASSERT_FALSE(log.ok()) << "flip at " << at;
    EXPECT_EQ(log.status().message(), "oplog segment " + path +
                                          " at offset 0 is corrupt: bad checksum (seq 1), and "
                                          "whole records follow it");
    EXPECT_EQ(Bytes(path), flipped);  // refused, and changed nothing
  }
}

TEST(Batch, AWellSummedBatchThatDoesNotDecodeIsAHardErrorEvenAtTheTail) {
  // A good checksum over a bad body is no torn write: never cut, never skipped.
  TestDir dir;
  std::string bytes;
  AppendFrame(1, "one", &bytes);
  const size_t at = bytes.size();
  AppendBatchFrame(2, "not a zstd frame", &bytes);
  const std::string path = dir / SegmentFileName(1);
  WriteBytes(path, bytes);
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), "oplog segment " + path + " at offset " + std::to_string(at) +
                                        " is corrupt: batch (seq 2): compressed batch is not a "
                                        "zstd frame with its size");
  // A body whose records are out of order, built by hand.
  BatchEncoder encoder;
  encoder.Add(5, "five");
  encoder.Add(5, "five again");
  bytes.resize(at);
  encoder.Compress(&bytes);
  WriteBytes(path, bytes);
  log = Oplog::Open(dir.path(), {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), "oplog segment " + path + " at offset " + std::to_string(at) +
                                        " is corrupt: batch (seq 5): compressed batch record 2: "
                                        "seq delta 0 out of order");
  LogCheck check = CheckLog(dir.path(), nullptr);
  EXPECT_EQ(check.error.message(), log.status().message());
}

// A segment written by the format before compressed batches (version 1): two record frames,
// byte for byte (length, seq, XXH64(payload, seq), payload).
constexpr char kVersion1Segment[] =
    "1700000001000000000000005fc1979d7500534b3020323037383220757c75303236322e7162706b2c310a"
    "1c0000000200000000000000ead34da33aaf94753120323037383220632e757c75303236322e44452e7162"
    "706b2c310a";

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

TEST(Batch, AnUpgradedLogRecoversItsVersion1SegmentsAndGoesOnWithBatches) {
  TestDir dir;
  const std::string old_path = dir / SegmentFileName(1);
  WriteBytes(old_path, Unhex(kVersion1Segment));
  const Records old = {{1, "0 20782 u|u0262.qbpk,1\n"}, {2, "1 20782 c.u|u0262.DE.qbpk,1\n"}};
  auto log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().records, 2u);
  EXPECT_EQ((*log)->recovery().message, "");
  EXPECT_EQ(ReadAll(**log), old);
  // New records: a new segment (the first write after a start opens one), in batches.
  Append(**log, 3, 300);
  log = Status::Error("closed");
  EXPECT_EQ(Bytes(old_path), Unhex(kVersion1Segment));  // the old segment is never rewritten
  ASSERT_EQ(SegmentNames(dir.path()), (std::vector<std::string>{SegmentFileName(1), SegmentFileName(3)}));
  EXPECT_TRUE(AnyBatch(Bytes(dir / SegmentFileName(3))));
  log = Oplog::Open(dir.path(), PlainSegments());
  ASSERT_TRUE(log.ok()) << log.status().message();
  Records want = old;
  for (const auto& r : Expected(3, 300)) want.push_back(r);
  EXPECT_EQ(ReadAll(**log, 0, 5), want);
  EXPECT_EQ(ReadAll(**log, 1, 1000), Records(want.begin() + 1, want.end()));
  LogCheck check = CheckLog(dir.path(), nullptr);
  EXPECT_TRUE(check.error.ok()) << check.error.message();
  EXPECT_EQ(check.records, 300u);
}

TEST(Batch, RecordFramesRefuseTheBatchBit) {
  // The late store reads record frames only: a batch frame there is an impossible length.
  std::string bytes;
  AppendBatchFrame(1, "x", &bytes);
  Frame frame;
  EXPECT_EQ(DecodeFrame(bytes, &frame), FrameState::kBadLength);
  EXPECT_EQ(DecodeLogFrame(bytes, &frame), FrameState::kOk);
  EXPECT_TRUE(frame.batch);
}

}  // namespace
}  // namespace clickatron::oplog
