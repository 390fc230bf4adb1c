// Flusher: the thread that applies frozen memtables to Tokyo Cabinet, one flush at a time.
//
// The ring (ring.h) hands it a flush as a function to run; the function applies each
// frozen table to its slot inside one transaction and commits. While a flush runs, the
// ring's event loop does not touch those slots' files (it waits with Wait() when it must:
// a read, a reset, a release), so Tokyo Cabinet sees one thread per file at any moment.
//
// When a flush finishes the thread writes to an eventfd (notify_fd()) that the server's
// event loop watches, so the loop learns at once that the flush is durable and can start
// the next one. Like the FileSyncer and the oplog's sync thread, an exception to "one
// event loop, no hidden threads", with a narrow hand-off: Start(), Busy(), Wait().
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace clickatron::realtime {

class Flusher {
 public:
  Flusher();
  // Waits for the running flush, then stops the thread.
  ~Flusher();
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  // Runs work on the flusher thread. REQUIRES: !Busy().
  void Start(std::function<void()> work);
  // True from Start() until the work has returned.
  bool Busy() const;
  // Blocks until the work started last has returned.
  void Wait();
  // Readable (an eventfd counter) after every finished work; the reader drains it with
  // DrainNotify(). -1 if the eventfd could not be made (then poll Busy()).
  int notify_fd() const { return notify_fd_; }
  void DrainNotify();

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable wake_;  // the thread: work or stop
  std::condition_variable done_;  // Wait(): work finished
  std::function<void()> work_;
  bool busy_ = false;
  bool stop_ = false;
  int notify_fd_ = -1;
  std::thread thread_;
};

}  // namespace clickatron::realtime
