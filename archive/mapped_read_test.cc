// Guarded reads (mapped_read.h) on real mappings of real files truncated under them: a
// fault inside the armed range is a result, on any thread, as often as it happens; a fault
// outside a guard or outside its range still kills, as before.
#include "archive/mapped_read.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "base/test_dir.h"

namespace clickatron::archive {
namespace {

constexpr size_t kPage = 4096;

// A file of `pages` pages of 'a' mapped read-only and shared, as DbFile maps.
class Mapping {
 public:
  Mapping(const std::string& path, size_t pages) : path_(path), size_(pages * kPage) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0);
    std::string bytes(size_, 'a');
    EXPECT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    void* p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    EXPECT_NE(p, MAP_FAILED);
    data_ = static_cast<const char*>(p);
  }
  ~Mapping() {
    munmap(const_cast<char*>(data_), size_);
    ::close(fd_);
  }
  void TruncateTo(size_t bytes) { EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0); }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::string path_;
  size_t size_;
  int fd_ = -1;
  const char* data_ = nullptr;
};

// Reads one byte through a volatile pointer, so the compiler cannot drop the read.
char Touch(const char* at) { return *static_cast<const volatile char*>(at); }

class MappedReadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(InstallMappedReadHandler().ok()); }
  TestDir dir_;
};

TEST_F(MappedReadTest, AWholeMappingReadsAsBefore) {
  Mapping m(dir_ / "f", 3);
  char seen = 0;
  MappedFault f = GuardMappedRead(m.data(), m.size(), [&] { seen = Touch(m.data() + 2 * kPage + 7); });
  EXPECT_FALSE(f);
  EXPECT_EQ(f.kind, MappedFault::Kind::kNone);
  EXPECT_EQ(seen, 'a');
}

TEST_F(MappedReadTest, AReadPastATruncatedEndIsAResultWithItsOffset) {
  Mapping m(dir_ / "f", 3);
  m.TruncateTo(kPage + 100);  // pages 0 and 1 still hold file bytes; page 2 does not
  char seen = 0;
  MappedFault f = GuardMappedRead(m.data(), m.size(), [&] { seen = Touch(m.data() + kPage + 50); });
  EXPECT_FALSE(f) << "a page the file still covers reads";
  EXPECT_EQ(seen, 'a');
  bool after_fault_ran = false;
  f = GuardMappedRead(m.data(), m.size(), [&] {
    seen = Touch(m.data() + 2 * kPage + 10);
    after_fault_ran = true;  // never: the read is abandoned at the fault
  });
  EXPECT_EQ(f.kind, MappedFault::Kind::kSigbus);
  EXPECT_EQ(f.offset, 2 * kPage + 10);
  EXPECT_FALSE(after_fault_ran);
}

// The handler stays installed and SIGBUS unblocked (SA_NODEFER): fault after fault is a
// result, and the thread's mask is as it was.
TEST_F(MappedReadTest, EveryFaultIsAResultAndTheMaskIsUnchanged) {
  Mapping m(dir_ / "f", 2);
  m.TruncateTo(0);
  for (int i = 0; i < 100; ++i) {
    MappedFault f = GuardMappedRead(m.data(), m.size(), [&] { Touch(m.data() + (i % 2) * kPage); });
    ASSERT_EQ(f.kind, MappedFault::Kind::kSigbus) << i;
    ASSERT_EQ(f.offset, (i % 2) * kPage) << i;
  }
  sigset_t mask;
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, nullptr, &mask), 0);
  EXPECT_FALSE(sigismember(&mask, SIGBUS));
}

// The guard is per thread: two threads fault on their own guards at once.
TEST_F(MappedReadTest, EachThreadHasItsOwnGuard) {
  Mapping m(dir_ / "f", 4);
  m.TruncateTo(kPage);
  MappedFault results[2];
  std::thread threads[2];
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([&, t] {
      for (int i = 0; i < 1000; ++i) {
        results[t] = GuardMappedRead(m.data(), m.size(), [&] { Touch(m.data() + (2 + t) * kPage); });
        if (results[t].kind != MappedFault::Kind::kSigbus) return;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(results[0].kind, MappedFault::Kind::kSigbus);
  EXPECT_EQ(results[0].offset, 2 * kPage);
  EXPECT_EQ(results[1].kind, MappedFault::Kind::kSigbus);
  EXPECT_EQ(results[1].offset, 3 * kPage);
}

TEST_F(MappedReadTest, BrokenBytesEndTheReadWithTheirOffset) {
  Mapping m(dir_ / "f", 1);
  bool after_ran = false;
  MappedFault f = GuardMappedRead(m.data(), m.size(), [&] {
    MappedBytesBroken(m.data() + 123);
    after_ran = true;
  });
  EXPECT_EQ(f.kind, MappedFault::Kind::kBadBytes);
  EXPECT_EQ(f.offset, 123u);
  EXPECT_FALSE(after_ran);
  // The guard is disarmed again: a later guarded read is whole.
  EXPECT_FALSE(GuardMappedRead(m.data(), m.size(), [&] { Touch(m.data()); }));
}

// A death by SIGBUS is checked by the ASan run only: ThreadSanitizer reports every deadly
// signal as a finding of its own (the child's "BUS on unknown address"), and ops/tsan fails
// on any report.
#if defined(__SANITIZE_THREAD__)
constexpr bool kSigbusDeathIsAReport = true;
#else
constexpr bool kSigbusDeathIsAReport = false;
#endif

// Outside a guard, a fault kills as it always did (the handler passes it on), and so do
// broken bytes.
TEST_F(MappedReadTest, AnUnguardedFaultStillKills) {
  Mapping m(dir_ / "f", 2);
  m.TruncateTo(0);
  if (!kSigbusDeathIsAReport) {
    EXPECT_DEATH(Touch(m.data() + kPage), "");
  }
  EXPECT_DEATH(MappedBytesBroken(m.data()), "no longer shaped as verified, outside a guarded read");
}

// A guard covers its own range only: a fault on another mapping is not a result.
TEST_F(MappedReadTest, AFaultOutsideTheGuardedRangeStillKills) {
  if (kSigbusDeathIsAReport) GTEST_SKIP() << "a death by SIGBUS is a TSan report: the ASan run checks it";
  Mapping guarded(dir_ / "a", 1);
  Mapping other(dir_ / "b", 2);
  other.TruncateTo(0);
  EXPECT_DEATH(GuardMappedRead(guarded.data(), guarded.size(), [&] { Touch(other.data()); }), "");
}

}  // namespace
}  // namespace clickatron::archive
