#include "archive/reloader.h"

#include <utility>

namespace clickatron::archive {

Reloader::Reloader(LiveDb* db, std::function<void(const Status&)> on_reload)
    : db_(db), on_reload_(std::move(on_reload)) {}

Reloader::~Reloader() { Stop(); }

void Reloader::Start() { thread_ = std::thread([this] { Main(); }); }

void Reloader::Request(Done done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_.push_back(std::move(done));
  }
  cv_.notify_one();
}

void Reloader::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Reloader::Main() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
    if (stopping_) return;
    // Everything queued now was asked before this reload opens the file.
    std::vector<Done> batch = std::move(queued_);
    queued_.clear();
    lock.unlock();
    Status s = db_->Reload();
    if (on_reload_) on_reload_(s);
    for (Done& done : batch) {
      if (done) done(s);
    }
    batch.clear();
    lock.lock();
  }
}

}  // namespace clickatron::archive
