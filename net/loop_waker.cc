#include "net/loop_waker.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace clickatron::net {

void InitLibeventThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (evthread_use_pthreads() != 0) {
      std::fprintf(stderr, "libevent: evthread_use_pthreads failed\n");
      std::abort();
    }
    // A client that closes its socket mid-reply must cost one failed write, not the
    // process: evbuffer writes with writev, which raises SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
  });
}

LoopWaker::LoopWaker(event_base* base, std::function<void()> on_wake)
    : on_wake_(std::move(on_wake)) {
  InitLibeventThreads();
  event_ = event_new(base, -1, 0, &LoopWaker::OnEvent, this);
}

LoopWaker::~LoopWaker() { event_free(event_); }

void LoopWaker::Wake() {
  if (pending_.exchange(true, std::memory_order_acq_rel)) return;
  event_active(event_, EV_READ, 1);
}

void LoopWaker::OnEvent(int, short, void* arg) {
  auto* self = static_cast<LoopWaker*>(arg);
  // Cleared before on_wake runs, so a Wake() racing with it schedules another call.
  self->pending_.store(false, std::memory_order_release);
  self->on_wake_();
}

}  // namespace clickatron::net
