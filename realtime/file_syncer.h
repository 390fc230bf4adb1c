// FileSyncer: fsyncs files on a dedicated thread, so the event loop never waits for the disk.
//
// After a group commit the slot files are consistent on the page cache, which is all a
// kill -9 needs (Tokyo Cabinet's commit is atomic against process death). Getting them to
// the device is only about power loss, and an fsync of a slot file that a busy second
// dirtied takes 40% of the commit's time (docs/benchmarks.md, realtime) — so it runs here,
// beside the loop, through a descriptor of its own (fsync flushes the file's pages however
// they were written, mmap included). The thread never touches Tokyo Cabinet objects.
//
// Request() queues paths (coalescing duplicates) and returns the round that will cover them;
// synced_round() says how far the syncs have got, and notify_fd() becomes readable each
// time a round finishes, so the event loop learns at once what is on the device: a write
// is reported durable (the synced seq, docs/realtime.md#durability) only when the round
// that covers it has finished, never at commit. Flush() waits until everything queued so
// far is synced. Errors are logged and counted. The Redis model's one exception to "no
// hidden threads", like the oplog's sync thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/latency.h"

namespace clickatron::realtime {

struct FileSyncerStats {
  uint64_t fsyncs = 0;        // attempted, failed ones included
  uint64_t errors = 0;
  uint64_t micros_max = 0;    // of one fsync
  uint64_t micros_total = 0;
};

class FileSyncer {
 public:
  FileSyncer();
  // Syncs what is queued, then stops the thread.
  ~FileSyncer();
  FileSyncer(const FileSyncer&) = delete;
  FileSyncer& operator=(const FileSyncer&) = delete;

  // Queues path for an fsync. Any thread. Returns the round whose end covers it.
  uint64_t Request(const std::string& path);
  // Every round up to this one reached the device. An fsync that fails stops it for good:
  // the kernel may have dropped the dirty pages and will not report the error twice, so
  // nothing written since can be called durable until the process restarts (and the API
  // keeps those events in its oplog meanwhile).
  uint64_t synced_round() const;
  // The newest round requested so far (0: none).
  uint64_t requested_round() const;
  // Blocks until every path queued before this call has been synced.
  void Flush();
  // Readable (an eventfd counter) after every finished round; the reader drains it with
  // DrainNotify(). -1 if the eventfd could not be made (then poll synced_round()).
  int notify_fd() const { return notify_fd_; }
  void DrainNotify();
  FileSyncerStats stats() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable wake_;     // the thread: work or stop
  std::condition_variable done_;     // Flush(): a round finished
  std::set<std::string> queued_;
  uint64_t requested_rounds_ = 0;    // bumped by every Request
  uint64_t finished_rounds_ = 0;     // requests covered by completed syncs
  uint64_t synced_rounds_ = 0;       // ... by successful ones, while none has failed
  bool failed_ = false;              // an fsync failed: synced_rounds_ stays where it was
  bool stop_ = false;
  uint64_t errors_ = 0;
  LatencyHistogram latency_;  // of each fsync; only the thread records
  int notify_fd_ = -1;
  std::thread thread_;
};

}  // namespace clickatron::realtime
