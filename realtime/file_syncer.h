// FileSyncer: fsyncs files on a dedicated thread, so the event loop never waits for the disk.
//
// After a group commit the slot files are consistent on the page cache, which is all a
// kill -9 needs (Tokyo Cabinet's commit is atomic against process death). Getting them to
// the device is only about power loss, and an fsync of a slot file that a busy second
// dirtied takes 40% of the commit's time (docs/benchmarks.md, realtime) — so it runs here,
// beside the loop, through a descriptor of its own (fsync flushes the file's pages however
// they were written, mmap included). The thread never touches Tokyo Cabinet objects.
//
// Request() queues paths (coalescing duplicates); Flush() waits until everything queued so
// far is synced. Errors are logged and counted. The Redis model's one exception to "no
// hidden threads", like the oplog's sync thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace clickatron::realtime {

struct FileSyncerStats {
  uint64_t fsyncs = 0;
  uint64_t errors = 0;
  uint64_t micros_max = 0;
  uint64_t micros_total = 0;
};

class FileSyncer {
 public:
  FileSyncer();
  // Syncs what is queued, then stops the thread.
  ~FileSyncer();
  FileSyncer(const FileSyncer&) = delete;
  FileSyncer& operator=(const FileSyncer&) = delete;

  // Queues path for an fsync. Any thread.
  void Request(const std::string& path);
  // Blocks until every path queued before this call has been synced.
  void Flush();
  FileSyncerStats stats() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable wake_;     // the thread: work or stop
  std::condition_variable done_;     // Flush(): a round finished
  std::set<std::string> queued_;
  uint64_t requested_rounds_ = 0;    // bumped by every Request
  uint64_t finished_rounds_ = 0;     // requests covered by completed syncs
  bool stop_ = false;
  FileSyncerStats stats_;
  std::thread thread_;
};

}  // namespace clickatron::realtime
