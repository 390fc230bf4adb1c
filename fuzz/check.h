// FUZZ_CHECK(condition, what): the invariant a fuzz target states beyond "no crash". A
// failure prints the condition and the target's words for it, then aborts, which libFuzzer
// reports as a crash and saves the input (docs/operations.md#fuzzing).
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                   \
  do {                                                                                \
    if (!(condition)) {                                                               \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__,  \
                   #condition, what);                                                 \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)
