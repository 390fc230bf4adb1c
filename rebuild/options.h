// The command line of clickatron-rebuild (docs/api.md#clickatron-rebuild) and what the cluster config adds to it.
//
//   clickatron-rebuild COMMAND --work DIR [flags]     (the commands: commands.h)
//
// Every flag may also be given as `name = value` in the --config file (the command line
// wins; config/option_loader.h); options of other programs in that file (port,
// oplog-dir, ...) are ignored. The realtime and archive servers are the cluster layout
// (config/cluster_layout.h). The archive shard count is --archive-shards, or the number
// of `archive =` lines of the config; both given and different is an error; neither
// means 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rebuild/backup_copy.h"
#include "base/status.h"
#include "config/cluster_layout.h"
#include "rebuild/record_sorter.h"

namespace clickatron::rebuild {

struct Options : config::ClusterLayout {  // realtime and archive servers
  std::string command;
  std::string work;
  std::string config;
  std::string input;
  std::string backup;
  BackupCodec backup_codec = BackupCodec::kZstd;  // publish's backup copy (backup_copy.h)
  Day day = 0, before = 0, through = 0;  // 0 = not given
  uint64_t memory = 1ull << 30;
  uint32_t archive_shards = 0;           // resolved: always >= 1 after parsing
  uint32_t jobs = 1;
  bool jobs_given = false;               // --jobs was given (publish's backup copy uses every core otherwise)
  uint64_t max_errors = 0;
  bool replace = false;
  bool allow_older = false;              // publish, activate: a generation ending before the live one
  std::string generation;                // activate: the generation (DIR/gen/<id>) to make live
  std::string manifest;                  // import: the manifest of the generation the input came from
  uint32_t keep_generations = 3;
  int timeout_ms = 30000;                // HTTP requests other than the export stream
  // The Slurm executor (slurm_executor.h, docs/operations.md#the-rebuild-on-a-slurm-cluster).
  std::string executor = "local";        // nightly, import: local | slurm
  uint32_t chunks = 4;                   // split (and import on slurm): chunks of the input
  std::string output;                    // split: the directory of the chunks
  std::string slurm_partition;           // sbatch --partition ("" = the cluster's default)
  uint32_t slurm_retries = 2;            // attempts of a failed task after its first
  uint32_t slurm_requeue_exit = 42;      // the cluster's RequeueExit code; 0: no requeue
  // What one task of a Slurm graph runs on (set by the executor, usable by hand).
  int64_t shard = -1;                    // export: one realtime shard; merge: one archive shard
  std::string task;                      // run as task NAME: shared lock, own recovery only
  std::string task_report;               // FILE: records, bytes, CPU, peak RSS at the end
};

// Parses argv. On --help (or no command) prints usage to stdout and sets *help_shown.
Status ParseOptions(int argc, const char* const* argv, Options* out, bool* help_shown);

// The newest day the nightly archives by default: today UTC − 2, from the wall clock
// (base/wall_clock.h). The API accepts increments from yesterday 00:00 UTC, so the day
// before yesterday is the newest one no API writes any more.
Day DefaultThroughDay();

// "YYYY-MM-DD" → Day, with the flag's name in the error.
Result<Day> ParseDayFlag(const std::string& text, const std::string& flag);

}  // namespace clickatron::rebuild
