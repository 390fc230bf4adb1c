// Reloader: runs LiveDb::Reload() on a thread of its own, so verifying a large new file
// (a full read of it: about a second for 5 million lines) never stalls an event loop.
//
// Request(done) asks for a reload of the file now at the path; `done(status)` then runs on
// the reloader's thread once a reload that *started after the request* has finished, so
// its answer always reflects the file as it was at or after the request (a SIGHUP or
// POST /reload sent right after `mv new data` sees the new file). Requests that arrive
// while a reload runs are served together by the next one.
//
// Stop() joins the thread; requests not yet served stay queued, unserved, and their
// callbacks are destroyed with the Reloader. Thread-safe.
#ifndef CLICKATRON_ARCHIVE_RELOADER_H_
#define CLICKATRON_ARCHIVE_RELOADER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "archive/live_db.h"
#include "base/status.h"

namespace clickatron::archive {

class Reloader {
 public:
  using Done = std::function<void(const Status&)>;

  // on_reload(status) runs after every reload (for logging), before the done callbacks.
  Reloader(LiveDb* db, std::function<void(const Status&)> on_reload);
  ~Reloader();
  Reloader(const Reloader&) = delete;
  Reloader& operator=(const Reloader&) = delete;

  // Starts the thread. REQUIRES: called once, before Request().
  void Start();
  // Any thread. done may be empty (a SIGHUP: nobody waits).
  void Request(Done done);
  // Joins the thread (after the reload in progress, if any). Idempotent.
  void Stop();

 private:
  void Main();

  LiveDb* const db_;
  const std::function<void(const Status&)> on_reload_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Done> queued_;  // guarded by mu_; a Done{} entry is a request without callback
  bool stopping_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_RELOADER_H_
