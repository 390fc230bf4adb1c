// FileWatcher (file_watcher.h) on real files with real inotify: a write in place is
// reported as kInotify, a new mtime alone (IN_ATTRIB, then fstat) as kStat, a truncation
// at once; after a reload the new file is watched and the old one is not.
#include "archive/file_watcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "archive/live_db.h"
#include "base/test_dir.h"

namespace clickatron::archive {
namespace {

constexpr char kFile[] = "a,1\nb,2\nc,3\n";

struct Report {
  const DbFile* file;
  DamageSource source;
};

// Collects the watcher's reports; Wait() returns once n have come (or after 20 s, failing).
class Reports {
 public:
  void Add(const std::shared_ptr<const DbFile>& db, DamageSource source) {
    // As the server does: mark it, so a damaged file is not reported again.
    db->health().MarkDamaged(source, db->DescribeDamage(source));
    std::lock_guard<std::mutex> lock(mu_);
    reports_.push_back({db.get(), source});
    cv_.notify_all();
  }
  std::vector<Report> Wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(20), [&] { return reports_.size() >= n; }))
        << "waited for " << n << " reports, got " << reports_.size();
    return reports_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Report> reports_;
};

void WriteAt(const std::string& path, off_t at, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), at), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// A cadence far longer than any test: what is reported came from inotify's wake-up.
constexpr int kNoCadence = 600000;

TEST(FileWatcher, AWriteInPlaceIsReportedByInotify) {
  TestDir dir;
  const std::string path = dir.Write("data.csv", kFile);
  LiveDb db(path, DbFileOptions{});
  ASSERT_TRUE(db.Open().ok());
  Reports reports;
  FileWatcher watcher(&db, kNoCadence, [&](const auto& f, DamageSource s) { reports.Add(f, s); });
  EXPECT_EQ(watcher.Start(), "");
  WriteAt(path, 2, "9");  // same size, same shape, another value
  std::vector<Report> got = reports.Wait(1);
  EXPECT_EQ(got[0].file, db.Current().get());
  EXPECT_EQ(got[0].source, DamageSource::kInotify);
  EXPECT_EQ(db.Current()->health().damage()->what,
            db.Current()->real_path() + ": rewritten in place (size 12 unchanged, mtime changed) (inotify: IN_MODIFY)");
  watcher.Stop();
  EXPECT_EQ(reports.Wait(1).size(), 1u) << "a damaged file is reported once";
}

TEST(FileWatcher, ATruncationIsReported) {
  TestDir dir;
  const std::string path = dir.Write("data.csv", kFile);
  LiveDb db(path, DbFileOptions{});
  ASSERT_TRUE(db.Open().ok());
  Reports reports;
  FileWatcher watcher(&db, kNoCadence, [&](const auto& f, DamageSource s) { reports.Add(f, s); });
  watcher.Start();
  ASSERT_EQ(truncate(path.c_str(), 5), 0);
  EXPECT_EQ(reports.Wait(1)[0].source, DamageSource::kInotify);
  EXPECT_EQ(db.Current()->health().damage()->what,
            db.Current()->real_path() + ": truncated in place from 12 to 5 bytes (inotify: IN_MODIFY)");
}

// `touch` writes nothing (no IN_MODIFY) but sets the mtime: IN_ATTRIB wakes the watcher and
// its fstat sees the change.
TEST(FileWatcher, ANewMtimeIsReportedByFstat) {
  TestDir dir;
  const std::string path = dir.Write("data.csv", kFile);
  LiveDb db(path, DbFileOptions{});
  ASSERT_TRUE(db.Open().ok());
  Reports reports;
  FileWatcher watcher(&db, kNoCadence, [&](const auto& f, DamageSource s) { reports.Add(f, s); });
  watcher.Start();
  struct timespec times[2] = {{12345, 0}, {12345, 0}};  // both, as touch sets them (mtime alone is an IN_MODIFY)
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_EQ(reports.Wait(1)[0].source, DamageSource::kStat);
  EXPECT_EQ(db.Current()->health().damage()->what,
            db.Current()->real_path() + ": rewritten in place (size 12 unchanged, mtime changed) (fstat)");
}

// A chmod, or renaming a new generation over the path, changes only the ctime: not a damage.
// After the reload the new file is the one watched.
TEST(FileWatcher, ARenameOverThePathIsNotADamage) {
  TestDir dir;
  const std::string path = dir.Write("data.csv", kFile);
  LiveDb db(path, DbFileOptions{});
  ASSERT_TRUE(db.Open().ok());
  std::shared_ptr<const DbFile> first = db.Current();
  Reports reports;
  FileWatcher watcher(&db, kNoCadence, [&](const auto& f, DamageSource s) { reports.Add(f, s); });
  watcher.Start();
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  const std::string next = dir.Write("next.csv", "a,5\nb,6\n");
  ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);  // the served inode loses its name
  ASSERT_TRUE(db.Reload().ok());
  watcher.Retarget();
  // Reports come in order: had the chmod or the rename been taken for a damage, the first
  // report would be the first file's.
  WriteAt(path, 2, "7");
  std::vector<Report> got = reports.Wait(1);
  EXPECT_EQ(got[0].file, db.Current().get());
  // inotify, or the fstat at the retarget when the write came before it
  EXPECT_TRUE(got[0].source == DamageSource::kInotify || got[0].source == DamageSource::kStat);
  EXPECT_FALSE(first->health().damaged());
  watcher.Stop();
  EXPECT_EQ(reports.Wait(1).size(), 1u);
}

}  // namespace
}  // namespace clickatron::archive
