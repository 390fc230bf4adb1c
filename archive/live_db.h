// LiveDb: the file a server is serving now, and the zero-downtime swap to a new one.
//
// Request handlers call Current() and hold the returned shared_ptr while they read from
// the mapping; Reload() opens and verifies the file now at the configured path (see
// DbFile::Open) and, only if it is good, makes it current. A request that started before
// the swap finishes on the old mapping, which is unmapped when its last holder lets go.
// A refused file changes nothing: the old file keeps being served and the error is
// returned (and logged by the caller).
//
// Current() takes a mutex for the length of a shared_ptr copy (two atomic operations),
// not for the request: a reload's minutes-long verification of a large file runs outside
// it. Thread-safe.
#ifndef CLICKATRON_ARCHIVE_LIVE_DB_H_
#define CLICKATRON_ARCHIVE_LIVE_DB_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "archive/db_file.h"
#include "base/status.h"

namespace clickatron::archive {

class LiveDb {
 public:
  LiveDb(std::string path, DbFileOptions options)
      : path_(std::move(path)), options_(options) {}

  // Opens the file at the path for the first time. REQUIRES: before any Current().
  Status Open();
  // Opens the file now at the path; on success it becomes current. Reloads are
  // serialised: one that arrives while another runs waits for it, then opens afresh.
  Status Reload();

  // The file serving now. REQUIRES: Open() succeeded.
  std::shared_ptr<const DbFile> Current() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }

  // How long the current file has been served, in milliseconds (since Open() or the
  // Reload() that made it current): the release's lease check (wire/generation.h).
  int64_t ServedMs() const;

  const std::string& path() const { return path_; }
  uint64_t reloads() const { return reloads_.load(std::memory_order_relaxed); }
  uint64_t failed_reloads() const { return failed_reloads_.load(std::memory_order_relaxed); }

 private:
  const std::string path_;
  const DbFileOptions options_;
  std::mutex reload_mu_;  // one reload at a time
  mutable std::mutex mu_;  // guards current_
  std::shared_ptr<const DbFile> current_;
  std::chrono::steady_clock::time_point current_since_;  // guarded by mu_
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> failed_reloads_{0};
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_LIVE_DB_H_
