// WallClockSeconds: the one place every Clickatron program reads the time of day.
//
// Normally unix seconds from the system clock. When the environment variable
// CLICKATRON_CLOCK_FILE names a file, the time is the decimal integer in that file instead,
// so that a test can run a cluster through simulated days (tests/soak/): the writer
// replaces the file atomically (write a temp file, rename it), and every process sees the
// new time within kWallClockRereadMs. Intervals (timeouts, sync periods, latencies) use the
// monotonic clock and are not affected.
//
// A clock file that cannot be read or parsed when first needed is a setup error: the
// program prints "CLICKATRON_CLOCK_FILE=<path>: ..." and exits 2. A later failed read keeps
// the last time read (docs/operations.md#soak-test).
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr int64_t kWallClockRereadMs = 50;

int64_t WallClockSeconds();

// The integer a clock file holds (decimal, optional trailing newline), or a named error.
Result<int64_t> ParseClockFile(std::string_view text);

}  // namespace clickatron
