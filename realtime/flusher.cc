#include "realtime/flusher.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace clickatron::realtime {

Flusher::Flusher() : notify_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), thread_([this] { Run(); }) {}

Flusher::~Flusher() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return !busy_; });
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (notify_fd_ >= 0) ::close(notify_fd_);
}

void Flusher::Start(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    work_ = std::move(work);
    busy_ = true;
  }
  wake_.notify_one();
}

bool Flusher::Busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

void Flusher::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return !busy_; });
}

void Flusher::DrainNotify() {
  uint64_t n;
  if (notify_fd_ >= 0) (void)!::read(notify_fd_, &n, sizeof n);
}

void Flusher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || work_; });
    if (!work_) return;  // stop_ and nothing to do
    std::function<void()> work = std::move(work_);
    work_ = nullptr;
    lock.unlock();
    work();
    lock.lock();
    busy_ = false;
    done_.notify_all();
    if (notify_fd_ >= 0) {
      const uint64_t one = 1;
      (void)!::write(notify_fd_, &one, sizeof one);
    }
  }
}

}  // namespace clickatron::realtime
