// The report a command writes at its end when given --task-report FILE: what the Slurm
// executor (slurm_executor.h) adds up per step, and the figures of docs/benchmarks.md#scale.
//
//   status = ok | <the error>
//   records = 1234          what the command's summaries counted (progress.h)
//   bytes = 5678
//   seconds = 1.25          wall time since the process started
//   cpu_seconds = 2.50      user + system, all threads
//   max_rss_kb = 40960      peak resident set
//   node = n1               $SLURMD_NODENAME, or the host name
#pragma once

#include <chrono>
#include <string>

#include "base/status.h"

namespace clickatron::rebuild {

// Writes the report of a command that ended with `result`, started at `start`.
Status WriteTaskReport(const std::string& path, const Status& result, std::chrono::steady_clock::time_point start);

}  // namespace clickatron::rebuild
