// A full disk or a failing write: appends fail with a clear error, the log keeps only whole,
// reported records, and appends work again once space returns.
//
// The main test injects a real write error with RLIMIT_FSIZE (the kernel then fails the
// write with EFBIG part-way through a record, like a disk filling up); the second mounts a
// real tiny tmpfs and fills it, and skips itself where mounting is not permitted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "oplog/frame.h"
#include "oplog/oplog.h"
#include "oplog/segment.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

struct Reports {
  std::mutex mu;
  std::vector<SyncReport> all;
  void Add(const SyncReport& r) {
    std::lock_guard<std::mutex> lock(mu);
    all.push_back(r);
  }
  SyncReport Last() {
    std::lock_guard<std::mutex> lock(mu);
    return all.back();
  }
};

// Limits the size of files this process writes; restores the old limit when destroyed.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    signal(SIGXFSZ, SIG_IGN);  // so the write fails with EFBIG instead of killing us
    getrlimit(RLIMIT_FSIZE, &old_);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &old_); }

 private:
  rlimit old_;
};

TEST(DiskFull, InjectedWriteErrorFailsTheAppendsAndDamagesNothing) {
  TestDir dir;
  Reports reports;
  Options o = PlainSegments();  // an appended segment: a write past the limit fails
  o.on_sync = [&](const SyncReport& r) { reports.Add(r); };
  auto opened = Oplog::Open(dir.path(), o);
  ASSERT_TRUE(opened.ok());
  Oplog& log = **opened;
  const std::string payload(100, 'r');  // frames of 120 bytes
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(log.Append(payload).ok());
  ASSERT_TRUE(log.Sync().ok());
  const std::string segment = dir / SegmentFileName(1);
  ASSERT_EQ(std::filesystem::file_size(segment), 360u);
  {
    FileSizeLimit limit(360 + 150);  // room for one more record and part of the next
    ASSERT_EQ(*log.Append(payload), 4u);
    ASSERT_TRUE(log.Sync().ok());
    ASSERT_EQ(*log.Append(payload), 5u);  // its write stops 30 bytes in
    Status s = log.Sync();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "write " + segment + ": File too large");
    SyncReport r = reports.Last();
    EXPECT_EQ(r.failed_first, 5u);
    EXPECT_EQ(r.failed_last, 5u);
    EXPECT_EQ(r.error, s.message());
    EXPECT_EQ(r.durable_seq, 4u);
    EXPECT_EQ(log.durable_seq(), 4u);
    EXPECT_EQ(std::filesystem::file_size(segment), 480u);  // the partial record is cut back
    // Still full: the next appends fail the same way.
    ASSERT_EQ(*log.Append(payload), 6u);
    ASSERT_EQ(*log.Append(payload), 7u);
    EXPECT_FALSE(log.Sync().ok());
    EXPECT_EQ(reports.Last().failed_last, 7u);
    Stats stats = log.GetStats();
    EXPECT_EQ(stats.failed_records, 3u);
    EXPECT_EQ(stats.last_error, s.message());
    EXPECT_EQ(stats.damaged, "");
  }
  // Space is back: appends work again, after a gap where the failed records were.
  ASSERT_EQ(*log.Append("back"), 8u);
  ASSERT_TRUE(log.Sync().ok());
  EXPECT_EQ(log.durable_seq(), 8u);
  std::vector<uint64_t> seqs;
  for (const auto& [seq, p] : ReadAll(log)) seqs.push_back(seq);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 8}));
  opened = Status::Error("closed");  // close, then recover: nothing to repair
  auto again = Oplog::Open(dir.path(), {});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->recovery().records, 5u);
  EXPECT_EQ((*again)->recovery().dropped_bytes, 0u);
  EXPECT_EQ((*again)->recovery().last_seq, 8u);
}

TEST(DiskFull, ARealFullFilesystem) {
  TestDir dir;
  const std::string mnt = dir / "tiny";
  SmallFilesystem fs(mnt, "256k");
  if (!fs.error().empty()) GTEST_SKIP() << "cannot mount a tmpfs here (" << fs.error() << ")";

  const std::string logdir = mnt + "/oplog";
  const std::string payload(6000, 'p');  // more than a page, so each record needs new pages
  std::vector<uint64_t> stored;
  {
    Reports reports;
    Options o;
    o.compress = false;  // record frames: each record needs new pages, as counted above
    o.on_sync = [&](const SyncReport& r) { reports.Add(r); };
    auto opened = Oplog::Open(logdir, o);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    Oplog& log = **opened;
    for (int i = 0; i < 3; ++i) stored.push_back(*log.Append(payload));
    ASSERT_TRUE(log.Sync().ok());
    {
      // Fill the rest of the filesystem.
      std::ofstream filler(mnt + "/filler", std::ios::binary);
      const std::string block(4096, 'f');
      for (int i = 0; i < 1000 && filler.good(); ++i) filler.write(block.data(), block.size());
    }
    // tmpfs counts its pages per CPU, so a write from another thread may still squeeze
    // into a page or two; append until the disk says no.
    uint64_t failed = 0;
    for (int i = 0; i < 64 && failed == 0; ++i) {
      const uint64_t seq = *log.Append(payload);
      Status s = log.Sync();
      if (s.ok()) {
        stored.push_back(seq);
        continue;
      }
      failed = seq;
      EXPECT_EQ(s.message(), "write " + logdir + "/" + SegmentFileName(1) +
                                 ": No space left on device");
    }
    ASSERT_NE(failed, 0u) << "the full filesystem accepted every write";
    EXPECT_EQ(log.durable_seq(), failed - 1);
    EXPECT_EQ(reports.Last().failed_first, failed);
    std::filesystem::remove(mnt + "/filler");
    stored.push_back(*log.Append(payload));
    ASSERT_TRUE(log.Sync().ok());
    EXPECT_EQ(stored.back(), failed + 1);
  }
  auto again = Oplog::Open(logdir, {});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->recovery().dropped_bytes, 0u);
  std::vector<uint64_t> seqs;
  for (const auto& [seq, p] : ReadAll(**again)) {
    seqs.push_back(seq);
    EXPECT_EQ(p, payload);
  }
  EXPECT_EQ(seqs, stored);
}

}  // namespace
}  // namespace clickatron::oplog
