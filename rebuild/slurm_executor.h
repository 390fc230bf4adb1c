// The Slurm executor: step 2 of `nightly --executor slurm` (nightly.cc) run as a graph of
// Slurm batch jobs on a shared work directory (docs/operations.md#the-rebuild-on-a-slurm-cluster).
//
// Each job runs clickatron-rebuild itself, one subcommand, as task NAME of the graph
// (--task NAME: work_dir.h OpenTask). Per group of days (nightly.cc):
//
//   export-D-N    export --day D --shard N          one per day and realtime shard
//   segment-D     segment --day D                   after export-D-*
//   late-G        late (last group only)            after the previous group's release
//   compact-G     compact --before <group's last>   after segment-*, late-G
//   merge-G-K     merge --shard K                   one per archive shard, after compact-G
//   publish-G     merge (takes the pieces), publish after merge-G-*
//   release-G     release --through <group's last>  after publish-G
//
// and the exports of a group wait for the release of the one before. Every dependency
// names each job it waits for (afterok:ID:ID...: a whole-array dependency would count a
// retried task as failed) and --kill-on-invalid-dep=yes cancels what can no longer run.
//
// Retries: a job's script records its exit in DIR/slurm/<run>/NAME.exit and, when the
// command failed and fewer than --slurm-retries retries were made (SLURM_RESTART_COUNT),
// exits --slurm-requeue-exit (the cluster's RequeueExit), so that Slurm runs it again; a
// job on a node that fails is requeued by Slurm (--requeue). Every task is idempotent and
// leaves nothing half-written under a name another reads (temp names, then rename; a
// marker written last), so a retry, or the next night, carries on.
//
// The driver submits the graph, then polls the exit files and `squeue` (no accounting is
// needed) about twice a second, prints the progress of each step (tasks done/total,
// records, bytes) when it changes and, per step, a summary at the end. A task that failed
// for good (or was cancelled, or vanished) cancels the rest of the graph and makes the
// night fail naming the task, its node, its attempts and its log, with the log's last
// lines. A graph of an earlier run still pending or running makes a new run refuse to start.
//
// A bulk load (`import --input FILE --executor slurm --chunks N`) is the graph
//
//   split         split --input FILE --output DIR/bulk/<run> --chunks N   (split.cc: by day)
//   import-I      import --input DIR/bulk/<run>/chunk-I.csv         one per chunk, after split
//   merge-K       merge --shard K                                   one per archive shard, after import-*
//   merge-all     merge (takes the pieces)                          after merge-*
//
// whose segments and merged files are those of one local `import` and `merge` of FILE, the
// lookups aside (one lookups segment per chunk; the merge deduplicates them). Each chunk is
// an import of its own (identified by its bytes), so running the same load again is a no-op
// per chunk; --max-errors applies to each chunk.
#pragma once

#include <vector>

#include "base/status.h"
#include "rebuild/options.h"
#include "rebuild/record_sorter.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

// Archives `days` (oldest first, through `through`) as the local nightly's step 2 does,
// on Slurm. REQUIRES: work opened with Open() (the lock is turned shared here).
Status RunNightlyOnSlurm(const Options& options, WorkDir* work, const std::vector<Day>& days, Day through);

// `import --executor slurm`: the bulk load above, then DIR/bulk/<run> removed.
// REQUIRES: work opened with Open().
Status RunImportOnSlurm(const Options& options, WorkDir* work);

}  // namespace clickatron::rebuild
