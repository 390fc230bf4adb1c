// LoopWaker: lets any thread make a function run on an event loop's thread.
//
// The oplog's sync thread reports durability to the API's loop this way: it pushes its
// result into a queue it shares with the loop (under the caller's own mutex) and calls
// Wake(); the loop then runs on_wake, which drains the queue. Wakes coalesce: several
// Wake() calls before the loop gets to run on_wake cause one call, so on_wake must drain
// everything that is there (and a Wake() that arrives while on_wake runs causes one more
// call, so nothing is missed).
//
// Implemented with event_active() on a libevent base created after
// evthread_use_pthreads() (InitLibeventThreads, called by every net constructor), so no
// extra file descriptor.
//
// REQUIRES: constructed and destroyed on the loop's thread; no Wake() may run concurrently
// with or after destruction (stop the producer thread first).
#ifndef CLICKATRON_NET_LOOP_WAKER_H_
#define CLICKATRON_NET_LOOP_WAKER_H_

#include <atomic>
#include <functional>

struct event;
struct event_base;

namespace clickatron::net {

// Makes libevent thread-aware (evthread_use_pthreads) and ignores SIGPIPE, once per
// process. Must run before any event_base a thread other than its loop touches is
// created; Server, HttpClient, Fetch and LoopWaker call it. Idempotent, thread-safe.
void InitLibeventThreads();

class LoopWaker {
 public:
  LoopWaker(event_base* base, std::function<void()> on_wake);
  ~LoopWaker();
  LoopWaker(const LoopWaker&) = delete;
  LoopWaker& operator=(const LoopWaker&) = delete;

  // Any thread: schedule on_wake on the loop. Cheap when a wake is already pending.
  void Wake();

 private:
  static void OnEvent(int fd, short what, void* arg);

  event* event_;
  std::function<void()> on_wake_;
  std::atomic<bool> pending_{false};
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_LOOP_WAKER_H_
