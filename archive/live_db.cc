#include "archive/live_db.h"

#include <utility>

namespace clickatron::archive {

Status LiveDb::Open() {
  Result<std::shared_ptr<const DbFile>> db = DbFile::Open(path_, options_);
  if (!db.ok()) return db.status();
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(db).value();
  current_since_ = std::chrono::steady_clock::now();
  return Status::OK();
}

int64_t LiveDb::ServedMs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - current_since_)
      .count();
}

Status LiveDb::Reload() {
  std::lock_guard<std::mutex> serial(reload_mu_);
  Result<std::shared_ptr<const DbFile>> db = DbFile::Open(path_, options_);
  if (!db.ok()) {
    failed_reloads_.fetch_add(1, std::memory_order_relaxed);
    return db.status();
  }
  std::shared_ptr<const DbFile> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::exchange(current_, std::move(db).value());
    current_since_ = std::chrono::steady_clock::now();
  }
  reloads_.fetch_add(1, std::memory_order_relaxed);
  // `old` is released here, outside the lock: if no request holds it, it is unmapped now;
  // otherwise by the last request that does.
  return Status::OK();
}

}  // namespace clickatron::archive
