// The oplog crash test (docs/oplog.md): a child process appends with `batch` sync and reports on a
// pipe what is acknowledged (durable); the parent kill -9s it at a random moment, reopens
// the log, and checks that every acknowledged record is there, whole and in order.
// Fifty rounds on the same directory, so each round also recovers from the last one.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "oplog/oplog.h"
#include "oplog/reader.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

// The payload of a seq, so the parent can check every byte that comes back.
std::string CrashPayload(uint64_t seq) {
  std::string p = "seq=" + std::to_string(seq) + ";";
  p.append(20 + (seq * 7919) % 280, static_cast<char>('a' + seq % 26));
  return p;
}

// Messages on the pipe: the first seq the child will append, then durable seqs.
[[noreturn]] void RunChild(const std::string& dir, int ack_fd) {
  Options o;
  o.sync = SyncPolicy::kBatch;
  o.segment_bytes = 256 << 10;  // rotations happen during the test too
  o.on_sync = [ack_fd](const SyncReport& r) {
    if (r.failed_last != 0) _exit(3);
    const uint64_t durable = r.durable_seq;
    if (write(ack_fd, &durable, sizeof durable) != sizeof durable) _exit(4);
  };
  Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir, o);
  if (!log.ok()) _exit(2);
  uint64_t next = (*log)->last_seq() + 1;
  if (write(ack_fd, &next, sizeof next) != sizeof next) _exit(4);
  for (;;) {
    if ((*log)->Append(CrashPayload(next)).ok()) {
      ++next;
    } else {
      usleep(100);  // the write queue is full: let the sync thread catch up
    }
  }
}

// Reads one message; false at end of file or after the deadline.
bool ReadMessage(int fd, uint64_t* value, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return false;
  size_t got = 0;
  while (got < sizeof *value) {
    ssize_t n = read(fd, reinterpret_cast<char*>(value) + got, sizeof *value - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

TEST(Crash, KillNineNeverLosesAnAcknowledgedRecord) {
  TestDir dir;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> delay_us(0, 20000);
  std::vector<std::pair<uint64_t, uint64_t>> acked;  // ranges of acknowledged seqs
  uint64_t total_acked = 0;
  int killed_in_prepared = 0;  // rounds whose newest segment was a prepared file
  for (int round = 0; round < 50; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      RunChild(dir.path(), fds[1]);
    }
    close(fds[1]);
    uint64_t first = 0, durable = 0, value = 0;
    ASSERT_TRUE(ReadMessage(fds[0], &first, 20000)) << "the child did not start";
    // Wait for the first acknowledgement, then kill at a random moment after it.
    ASSERT_TRUE(ReadMessage(fds[0], &durable, 20000)) << "the child acknowledged nothing";
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child failed by itself, status " << status;
    while (ReadMessage(fds[0], &value, 1000)) durable = std::max(durable, value);
    close(fds[0]);
    if (durable >= first) {
      acked.emplace_back(first, durable);
      total_acked += durable - first + 1;
    }

    Result<std::unique_ptr<Oplog>> log = Oplog::Open(dir.path(), PlainSegments());
    ASSERT_TRUE(log.ok()) << log.status().message();
    if ((*log)->recovery().trimmed_bytes > 0) ++killed_in_prepared;
    std::unique_ptr<Reader> reader = (*log)->NewReader();
    std::vector<Reader::Record> records;
    size_t range = 0;
    uint64_t after = 0, found = 0;
    for (;;) {
      ASSERT_TRUE(reader->Read(after, 4096, 1 << 20, &records).ok());
      if (records.empty()) break;
      for (const Reader::Record& r : records) {
        ASSERT_EQ(r.payload, CrashPayload(r.seq));
        while (range < acked.size() && r.seq > acked[range].second) ++range;
        if (range < acked.size() && r.seq >= acked[range].first) ++found;
      }
      after = records.back().seq;
    }
    ASSERT_EQ(found, total_acked) << "acknowledged records are missing";
  }
  EXPECT_GT(total_acked, 0u);
  // The child writes into prepared segments (the default) once one is ready; most kills
  // must land there, or this test would not cover them.
  EXPECT_GT(killed_in_prepared, 10);
  std::printf("%zu rounds acknowledged %llu records in all; %d killed in a prepared segment\n",
              acked.size(), static_cast<unsigned long long>(total_acked), killed_in_prepared);
}

}  // namespace
}  // namespace clickatron::oplog
