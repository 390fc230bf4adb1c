// `nightly [--through D]`: archives every closed day not yet in the archive, oldest first,
// through D (default: today UTC − 2, options.h DefaultThroughDay; `--day D` means the
// same), then releases what the live generation holds (docs/operations.md#the-nightly-job).
//
//   0. read every realtime shard's /stats (all must answer) and the live manifest; the
//      days to archive run from its last_day + 1 — or, when nothing is published or the
//      realtime shards hold no day that old, from the oldest day any shard holds (an older
//      day is held nowhere: there is nothing to export for it) — through D;
//   1. release the days the live generation already holds (a night that published but
//      failed to release; the slots the days below need);
//   2. for each group of at most kRingSlots days (so that no day's slot is still taken by
//      an unreleased day of the same group): for each day export (which closes the day
//      on every realtime shard first: POST /close?day=, export.cc; a shard down fails the
//      night and nothing is released) and segment; then — with the last group — the late data of every
//      API (late.cc); compact, merge, publish, release through the group's last day;
//   3. POST /late/release to every API merged (ReleaseLate).
//
// With --executor slurm, step 2 runs as a graph of Slurm jobs (slurm_executor.h); steps 0,
// 1 and 3 run here either way.
//
// Every step is idempotent and checks what is already done, so after a failure or a kill
// the next run (the same command, or the next night's) completes the work: closing is
// idempotent, an export on disk is re-verified and kept, a segmented day is skipped, a
// merge of the same segments and a publish of the same content are no-ops, and release
// frees only days the live manifest records as exported from every shard.
#include <algorithm>
#include <cstdio>

#include "keyformat/day_ring.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/commands.h"
#include "rebuild/late.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/slurm_executor.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

// The oldest day any realtime shard holds in a slot (any state), or 0 when none holds one.
Result<Day> OldestHeldDay(const Options& options) {
  std::vector<std::string> oldest(options.realtime.size());
  Status s = RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    Result<std::vector<net::RealtimeSlotFields>> slots = ReadRealtimeSlotsOf(options.realtime[n], options.timeout_ms);
    if (!slots.ok()) {
      return Status::Error("the /stats of realtime shard " + std::to_string(n) + " (" +
                           options.realtime[n].ToString() + ") cannot be read: " + slots.status().message());
    }
    for (const net::RealtimeSlotFields& slot : *slots) {
      if (!slot.day.empty() && (oldest[n].empty() || slot.day < oldest[n])) oldest[n] = slot.day;
    }
    return Status::OK();
  });
  if (!s.ok()) return s;
  Day out = 0;
  for (const std::string& day : oldest) {
    if (day.empty()) continue;
    Result<int64_t> d = ParseDay(day);
    if (!d.ok()) return Status::Error("a realtime shard holds a day '" + day + "': " + d.status().message());
    if (out == 0 || Day(*d) < out) out = Day(*d);
  }
  return out;
}

Status RunStep(const char* command, const Options& options, WorkDir* work) {
  if (Status s = FindCommand(command)->run(options, work); !s.ok()) return s.Prefixed(std::string(command) + ": ");
  return Status::OK();
}

// Step 2 on this machine. False when there was nothing to archive (the summary printed).
Result<bool> ArchiveDays(const Options& options, WorkDir* work, const std::vector<Day>& days, Day through,
                         Progress* progress) {
  size_t done = 0;
  do {
    const size_t end = std::min(days.size(), done + size_t(kRingSlots));
    const Day group_last = end > done ? days[end - 1] : through;
    for (size_t i = done; i < end; ++i) {
      Options day = options;
      day.day = days[i];
      if (Status s = RunStep("export", day, work); !s.ok()) return s;
      if (Status s = RunStep("segment", day, work); !s.ok()) return s;
    }
    done = end;
    if (done == days.size()) {
      Options late = options;
      late.through = through;
      if (Status s = RunStep("late", late, work); !s.ok()) return s;
    }
    Result<std::vector<SegmentInfo>> segments = work->Segments();
    if (!segments.ok()) return segments.status();
    if (segments->empty()) {
      progress->Summary("done: nothing to archive (no segment, no day held by a realtime shard through " +
                        FormatDay(through) + ")");
      return false;
    }
    Options compact = options;
    compact.before = group_last;
    if (Status s = RunStep("compact", compact, work); !s.ok()) return s;
    if (Status s = RunStep("merge", options, work); !s.ok()) return s;
    if (Status s = RunStep("publish", options, work); !s.ok()) return s;
    Result<std::optional<Manifest>> published = LiveManifest(*work);
    if (!published.ok()) return published.status();
    Options release = options;
    release.through = std::min<Day>(group_last, Day(*ParseDay((*published)->last_day)));
    if (Status s = RunStep("release", release, work); !s.ok()) return s;
  } while (done < days.size());

  return true;
}

}  // namespace

Status RunNightly(const Options& options, WorkDir* work) {
  if (options.day != 0 && options.through != 0 && options.day != options.through) {
    return Status::Error("--day " + FormatDay(options.day) + " and --through " + FormatDay(options.through) +
                         " disagree (--day means --through for nightly)");
  }
  const Day through = options.through ? options.through : options.day ? options.day : DefaultThroughDay();
  Progress progress("nightly " + FormatDay(through));

  // 0. What is archived, what realtime holds: the days to archive.
  Result<std::optional<Manifest>> live = LiveManifest(*work);
  if (!live.ok()) return live.status();
  Result<Day> oldest_held = OldestHeldDay(options);
  if (!oldest_held.ok()) return oldest_held.status();
  Day first = *oldest_held != 0 ? *oldest_held : Day(through + 1);
  if (*live) {
    Result<int64_t> last = ParseDay((*live)->last_day);
    if (!last.ok()) return last.status();
    first = std::max<Day>(first, Day(*last + 1));
  }
  std::vector<Day> days;
  for (Day d = first; d <= through; ++d) days.push_back(d);

  // 1. What the live generation already holds.
  if (*live) {
    Options release = options;
    release.through = std::min<Day>(through, Day(*ParseDay((*live)->last_day)));
    if (Status s = RunStep("release", release, work); !s.ok()) return s;
  }

  // 2. The days, a group at a time; the late data with the last group.
  if (options.executor == "slurm") {
    Result<std::vector<SegmentInfo>> segments = work->Segments();
    if (!segments.ok()) return segments.status();
    if (days.empty() && segments->empty()) {
      progress.Summary("done: nothing to archive (no segment, no day held by a realtime shard through " +
                       FormatDay(through) + ")");
      return Status::OK();
    }
    if (Status s = RunNightlyOnSlurm(options, work, days, through); !s.ok()) return s;
  } else {
    Result<bool> archived = ArchiveDays(options, work, days, through, &progress);
    if (!archived.ok()) return archived.status();
    if (!*archived) return Status::OK();
  }

  // 3. The APIs may drop the late entries the live generation holds.
  Result<std::optional<Manifest>> published = LiveManifest(*work);
  if (!published.ok()) return published.status();
  if (*published) ReleaseLate(options, **published);
  progress.Summary(days.empty() ? "done: no day to archive through " + FormatDay(through)
                                : "done: archived " + std::to_string(days.size()) + " day(s) " +
                                      FormatDay(days.front()) + ".." + FormatDay(days.back()));
  return Status::OK();
}

}  // namespace clickatron::rebuild
