// Guarded reads of a mapped file: a fault on the mapping while a guarded read runs becomes a
// result, not the death of the process (docs/archive.md#a-file-changed-under-the-server).
//
// A read of a page of a MAP_SHARED mapping that lies past the end of its file raises SIGBUS
// (the file was truncated in place after it was mapped); so does an I/O error reading a page
// in. GuardMappedRead(base, size, fn) runs fn and returns what ended it: nothing (fn
// returned), a SIGBUS at an address inside [base, base + size) on this thread, or fn's own
// call to MappedBytesBroken() (a reader that found the bytes no longer shaped as they were
// when verified: the file was rewritten in place). In both fault cases fn is abandoned where
// it stood and the result carries the offset from base.
//
// How (the mechanism the JVM uses for faults on a MappedByteBuffer): one process-wide
// SIGBUS handler (InstallMappedReadHandler) and a thread-local guard — the range and a
// sigjmp_buf saved by sigsetjmp(env, 0) — armed for the length of fn. The handler jumps
// back (siglongjmp) only for a fault (si_code > 0) whose address is inside the range armed
// on the faulting thread. Anything else goes to the disposition that was there before ours:
// the handler puts it back and returns, so the faulting instruction runs again and faults
// under it (the default kills with a core, as before; a sanitizer reports); a SIGBUS sent
// with kill() is raised again.
//
// Async-signal-safety. The handler reads a thread-local (initial-exec TLS, a fixed offset
// from the thread pointer: nothing is allocated or locked) and calls only sigaction, raise
// and siglongjmp. Jumping out of a handler is defined when the interrupted code is
// async-signal-safe, which the rules below make so. sigsetjmp(env, 0) saves no signal mask
// (saving it is a syscall per read); the handler runs with SA_NODEFER, so SIGBUS is not
// blocked while it runs and the jump leaves the thread's mask as it found it.
//
// The rules for fn, which make the jump out of it well defined:
//   * mapped bytes are read only by code that holds no lock, is not inside an allocation,
//     and has no object with a non-trivial destructor alive in a frame between the guard
//     and the read: memchr, memrchr, memcmp, memcpy, XXH64, the key comparisons and the
//     lookups of db_file.h (all async-signal-safe). Allocation between reads is fine: the
//     fault interrupts only the instruction that reads the mapping.
//   * after a fault, what fn wrote may be half done: the caller discards it.
//   * guards do not nest on a thread.
// Cost: about 60 instructions per guarded read (sigsetjmp without a syscall, two stores, an
// indirect call): docs/benchmarks.md#archive-guarded-reads.
#ifndef CLICKATRON_ARCHIVE_MAPPED_READ_H_
#define CLICKATRON_ARCHIVE_MAPPED_READ_H_

#include <cstddef>
#include <type_traits>

#include "base/status.h"

namespace clickatron::archive {

// What ended a guarded read; false (kNone) when fn returned.
struct MappedFault {
  enum class Kind {
    kNone,
    kSigbus,     // a read of the mapping faulted (past the end of a truncated file, or I/O)
    kBadBytes,   // fn found bytes that are no longer shaped as verified (MappedBytesBroken)
  };
  Kind kind = Kind::kNone;
  size_t offset = 0;  // of the faulting address or the broken bytes, from base

  explicit operator bool() const { return kind != Kind::kNone; }
};

// Installs the process's SIGBUS handler; later calls do nothing. Until it is installed, a
// fault inside a guard kills the process as an unguarded one does. Errors name sigaction's.
Status InstallMappedReadHandler();

// Called by a reader inside a guard that finds the mapped bytes at `at` no longer shaped as
// verified (a line without its '\n' or separator): fn is abandoned and the guard returns
// kBadBytes. Outside a guard it prints the address and aborts, as an unguarded fault kills.
[[noreturn]] void MappedBytesBroken(const char* at);

namespace internal {
MappedFault RunGuarded(const char* base, size_t size, void (*call)(void*), void* fn);
}  // namespace internal

// Runs fn() with faults on [base, base + size) turned into the result. REQUIRES: fn follows
// the rules above; no guard is armed on this thread.
template <typename Fn>
MappedFault GuardMappedRead(const char* base, size_t size, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  return internal::RunGuarded(base, size, [](void* f) { (*static_cast<F*>(f))(); },
                              const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_MAPPED_READ_H_
