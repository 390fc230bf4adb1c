#include "realtime/file_syncer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace clickatron::realtime {

FileSyncer::FileSyncer() : thread_([this] { Run(); }) {}

FileSyncer::~FileSyncer() {
  Flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void FileSyncer::Request(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_.insert(path);
    ++requested_rounds_;
  }
  wake_.notify_one();
}

void FileSyncer::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = requested_rounds_;
  done_.wait(lock, [&] { return finished_rounds_ >= target; });
}

FileSyncerStats FileSyncer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void FileSyncer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stop_ and nothing left
    std::set<std::string> paths;
    paths.swap(queued_);
    const uint64_t round = requested_rounds_;
    lock.unlock();
    for (const std::string& path : paths) {
      auto start = std::chrono::steady_clock::now();
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      bool ok = fd >= 0 && ::fsync(fd) == 0;
      int err = errno;
      if (fd >= 0) ::close(fd);
      auto micros = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::steady_clock::now() - start).count());
      if (!ok) std::fprintf(stderr, "realtime: fsync %s: %s\n", path.c_str(), std::strerror(err));
      std::lock_guard<std::mutex> stats_lock(mu_);
      ++stats_.fsyncs;
      stats_.errors += ok ? 0 : 1;
      stats_.micros_total += micros;
      if (micros > stats_.micros_max) stats_.micros_max = micros;
    }
    lock.lock();
    finished_rounds_ = round;
    done_.notify_all();
  }
}

}  // namespace clickatron::realtime
