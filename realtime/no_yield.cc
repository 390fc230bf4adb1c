// A no-op sched_yield for the clickatron-realtime daemon.
//
// Debian's libtokyocabinet9 (1.4.48-15) is built with Tokyo Cabinet's race-detection
// micro-yields: its lock helpers call sched_yield() around every lock operation, about
// 5.5 million calls per million B+tree increments, each a system call. Upstream builds do
// not do this; it only makes thread interleavings more varied for Tokyo Cabinet's own tests.
// Defining sched_yield in the executable makes the dynamic linker bind the library's calls
// to this function instead of glibc's (the executable comes first in symbol lookup).
//
// Safe here because nothing in this process needs a real yield: sched_yield is only a hint
// (no correctness may depend on it), Tokyo Cabinet's locks are pthread mutexes and rwlocks
// that block rather than spin, each slot file is used by one thread at a time (the event
// loop, or the flusher thread while the loop leaves that slot alone: realtime/ring.h),
// libevent and glibc's mutexes never call sched_yield, and the sanitizer runtimes use their
// own raw system call. Measured effect: docs/benchmarks.md (realtime).
// Linked only into clickatron-realtime and the realtime benchmark, never into a library.
extern "C" int sched_yield(void) noexcept { return 0; }
