#include "config/config_keys.h"

#include <algorithm>
#include <iterator>

namespace clickatron::config {
namespace {

// Sorted, for binary search. Which program reads each key is in its --help.
constexpr std::string_view kKeys[] = {
    "address",          // api, realtime, archive
    "allow-older",      // rebuild
    "api",              // api, rebuild: one line per API node
    "archive",          // api, rebuild: one line per archive shard
    "archive-lease-ms",            // api
    "archive-shards",   // rebuild
    "backup",           // rebuild
    "backup-codec",     // rebuild
    "before",           // rebuild
    "cache-mb",         // realtime
    "chunks",           // rebuild
    "config",           // every program (the file itself)
    "country-codes",    // api
    "data-dir",         // realtime
    "day",              // rebuild
    "db-file",          // archive
    "display-name",     // api
    "executor",         // rebuild
    "field-separator",  // archive
    "fwmatch-limit",    // realtime, archive
    "generation",       // rebuild
    "help",             // every program
    "idempotency-mb",   // api
    "idle-timeout-ms",  // api, realtime, archive
    "input",            // rebuild
    "jobs",             // rebuild
    "keep-generations", // rebuild
    "log-requests",     // archive
    "manifest",         // rebuild
    "max-answer-mb",    // archive
    "max-body-mb",      // realtime
    "max-connections",  // api, realtime, archive
    "max-errors",       // rebuild
    "max-inflight-body-mb",  // api, realtime, archive
    "max-mget-keys",    // realtime, archive
    "max-pending-mb",   // realtime
    "memory",           // rebuild
    "node-id",          // api
    "oplog-dir",        // api
    "oplog-sync",       // api
    "output",           // rebuild
    "populate",         // archive
    "port",             // api, realtime, archive
    "power-safe",       // realtime
    "query-cache-mb",              // api
    "query-max-backend-mb",        // api
    "query-max-backend-requests",  // api
    "realtime",         // api, rebuild: one line per realtime shard
    "replace",          // rebuild
    "request-timeout-ms",  // api, realtime, archive
    "require-secret-for-reads",  // realtime, archive
    "secret-file",      // api, realtime, archive, rebuild (config/cluster_secret.h)
    "shard",            // rebuild
    "slurm-partition",  // rebuild
    "slurm-requeue-exit",  // rebuild
    "slurm-retries",    // rebuild
    "source-lease-ms",  // realtime
    "stats-secret",     // api
    "sync-interval",    // realtime
    "task",             // rebuild
    "task-report",      // rebuild
    "threads",          // archive
    "through",          // rebuild
    "timeout-ms",       // rebuild
    "ui-chartjs",       // api
    "ui-dir",           // api
    "work",             // rebuild
};

}  // namespace

bool IsConfigKey(std::string_view key) {
  static_assert(std::is_sorted(std::begin(kKeys), std::end(kKeys)));
  return std::binary_search(std::begin(kKeys), std::end(kKeys), key);
}

}  // namespace clickatron::config
