#include "realtime/file_syncer.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace clickatron::realtime {

FileSyncer::FileSyncer() : notify_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), thread_([this] { Run(); }) {}

FileSyncer::~FileSyncer() {
  Flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (notify_fd_ >= 0) ::close(notify_fd_);
}

uint64_t FileSyncer::Request(const std::string& path) {
  uint64_t round;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_.insert(path);
    round = ++requested_rounds_;
  }
  wake_.notify_one();
  return round;
}

uint64_t FileSyncer::synced_round() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_rounds_;
}

uint64_t FileSyncer::requested_round() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_rounds_;
}

void FileSyncer::DrainNotify() {
  uint64_t n;
  if (notify_fd_ >= 0) (void)!::read(notify_fd_, &n, sizeof n);
}

void FileSyncer::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = requested_rounds_;
  done_.wait(lock, [&] { return finished_rounds_ >= target; });
}

FileSyncerStats FileSyncer::stats() const {
  const LatencySnapshot latency = latency_.Snapshot();
  FileSyncerStats stats;
  stats.fsyncs = latency.count();
  stats.micros_max = latency.max_micros();
  stats.micros_total = latency.sum_micros();
  std::lock_guard<std::mutex> lock(mu_);
  stats.errors = errors_;
  return stats;
}

void FileSyncer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stop_ and nothing left
    std::set<std::string> paths;
    paths.swap(queued_);
    const uint64_t round = requested_rounds_;
    bool round_ok = true;
    lock.unlock();
    for (const std::string& path : paths) {
      const uint64_t start = MonotonicMicros();
      const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      const bool ok = fd.valid() && ::fsync(fd.get()) == 0;
      const int err = errno;
      latency_.Record(MonotonicMicros() - start);
      round_ok = round_ok && ok;
      if (!ok) {
        std::fprintf(stderr, "realtime: %s\n", ErrnoStatus(err, "fsync " + path).message().c_str());
        std::lock_guard<std::mutex> stats_lock(mu_);
        ++errors_;
      }
    }
    lock.lock();
    finished_rounds_ = round;
    failed_ = failed_ || !round_ok;
    if (!failed_) synced_rounds_ = round;
    done_.notify_all();
    if (notify_fd_ >= 0) {
      const uint64_t one = 1;
      (void)!::write(notify_fd_, &one, sizeof one);
    }
  }
}

}  // namespace clickatron::realtime
