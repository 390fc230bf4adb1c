// hold_fsync.so: an LD_PRELOAD fault injector for the durability tests (tests/test_realtime_power.py).
//
// While the file named by CLICKATRON_HOLD_FSYNC exists, every fsync/fdatasync of a file whose
// path ends in CLICKATRON_HOLD_FSYNC_SUFFIX (default ".tcb") waits; it goes on once the file is
// removed; while it waits, the file CLICKATRON_HOLD_FSYNC".held" exists. That freezes a process between "committed to the page cache" and "on the device",
// the window a power loss hits, so a test can look at what the process reports there and
// kill it. Without the variable it only forwards to the real calls.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int PathMatches(int fd) {
  const char* suffix = getenv("CLICKATRON_HOLD_FSYNC_SUFFIX");
  if (suffix == NULL) suffix = ".tcb";
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  size_t len = (size_t)n, slen = strlen(suffix);
  return len >= slen && strcmp(path + len - slen, suffix) == 0;
}

static void HoldWhileFileExists(int fd) {
  const char* hold = getenv("CLICKATRON_HOLD_FSYNC");
  if (hold == NULL || !PathMatches(fd)) return;
  if (access(hold, F_OK) != 0) return;
  char held[PATH_MAX];
  snprintf(held, sizeof held, "%s.held", hold);
  FILE* marker = fopen(held, "w");
  if (marker != NULL) fclose(marker);
  const struct timespec tick = {0, 5 * 1000 * 1000};
  while (access(hold, F_OK) == 0) nanosleep(&tick, NULL);
  unlink(held);
}

int fsync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  HoldWhileFileExists(fd);
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  HoldWhileFileExists(fd);
  return real(fd);
}
