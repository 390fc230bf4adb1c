#include "archive/mapped_read.h"

#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "base/errno_status.h"

namespace clickatron::archive {

namespace {

// The guard armed on this thread. env is null when none is: the handler then passes the
// signal on. Constant-initialised, initial-exec TLS: the handler's access is a load at a
// fixed offset from the thread pointer (no __tls_get_addr, which may allocate).
struct Guard {
  const char* lo;
  const char* hi;
  sigjmp_buf* env;
  const char* at;  // the faulting address or the broken bytes, for the result
};
constinit thread_local Guard tls_guard __attribute__((tls_model("initial-exec"))) = {};

// The disposition before ours, put back for a SIGBUS that is not ours. Written once, before
// the handler is installed.
struct sigaction previous_action;

void OnSigbus(int sig, siginfo_t* info, void* /*context*/) {
  Guard& g = tls_guard;
  const char* at = static_cast<const char*>(info->si_addr);
  if (info->si_code > 0 && g.env != nullptr && at >= g.lo && at < g.hi) {
    g.at = at;
    siglongjmp(*g.env, static_cast<int>(MappedFault::Kind::kSigbus));
  }
  // Not a fault of a guarded read: the previous disposition decides. A fault re-runs the
  // faulting instruction when we return, and faults again under it; kill() must be re-sent.
  sigaction(SIGBUS, &previous_action, nullptr);
  if (info->si_code <= 0) raise(sig);
}

// After a jump out of the handler. SA_NODEFER keeps SIGBUS unblocked in our handler, but a
// runtime that wraps signal handlers need not keep the flag (ThreadSanitizer's does not):
// the jump, which restores no mask, would leave SIGBUS blocked and the next fault fatal.
// Only on a fault, so the guarded read itself makes no system call.
void UnblockSigbus() {
  sigset_t bus;
  sigemptyset(&bus);
  sigaddset(&bus, SIGBUS);
  pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
}

}  // namespace

Status InstallMappedReadHandler() {
  static std::mutex mu;
  static bool installed = false;
  std::lock_guard<std::mutex> lock(mu);
  if (installed) return Status::OK();
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  // SA_NODEFER: SIGBUS stays unblocked in the handler, so the jump out of it (which does
  // not restore a mask) leaves the thread's mask as it was. A blocked SIGBUS on a later
  // fault would make the kernel reset the handler to the default and kill the process.
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGBUS, &action, &previous_action) != 0) {
    return ErrnoStatus(errno, "sigaction(SIGBUS)");
  }
  installed = true;
  return Status::OK();
}

void MappedBytesBroken(const char* at) {
  Guard& g = tls_guard;
  if (g.env != nullptr) {
    g.at = at;
    siglongjmp(*g.env, static_cast<int>(MappedFault::Kind::kBadBytes));
  }
  std::fprintf(stderr, "mapped bytes at %p are no longer shaped as verified, outside a guarded read\n",
               static_cast<const void*>(at));
  std::abort();
}

namespace internal {

MappedFault RunGuarded(const char* base, size_t size, void (*call)(void*), void* fn) {
  Guard& g = tls_guard;
  sigjmp_buf env;
  g.lo = base;
  g.hi = base + size;
  g.at = nullptr;
  // Returns 0 now, and the fault's Kind when the handler or MappedBytesBroken jumps back.
  const int jumped = sigsetjmp(env, 0);
  if (jumped == 0) {
    g.env = &env;
    // Nothing of fn may be moved before the guard is armed or after it is disarmed.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    call(fn);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g.env = nullptr;
    return MappedFault{};
  }
  g.env = nullptr;
  if (jumped == static_cast<int>(MappedFault::Kind::kSigbus)) UnblockSigbus();
  return MappedFault{static_cast<MappedFault::Kind>(jumped), static_cast<size_t>(g.at - g.lo)};
}

}  // namespace internal

}  // namespace clickatron::archive
