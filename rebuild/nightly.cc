// `nightly [--through D]`: brings the cluster to its steady state, whatever came before
// (docs/operations.md#the-nightly-job; the protocol: docs/architecture.md#one-owner-per-day,
// rebuild/day_plan.h): every day through D (default: today UTC − 2, options.h
// DefaultThroughDay; `--day D` means the same) archived, every day the archive owns closed
// on every realtime shard and added from wherever realtime took increments for it, and
// every slot the archive holds released.
//
//   0. read every realtime shard's /stats (all must answer), the live manifest and the work
//      directory's segments;
//   1. the fence: every shard whose closed-through is before H (the archive's last day, or
//      the work directory's newest) or before the night's last day closes through the
//      later of the two; then the shards' /stats again, and the plan (day_plan.h PlanNight);
//   2. release the days the live generation already holds (a night that published but
//      failed to release; the slots the days below need);
//   3. the parts: each held day <= H that the work directory lacks from that shard's ring is
//      exported from that shard alone and segmented as an addition (segment --shard);
//   4. for each group of at most kRingSlots new days (so that no day's slot is still taken
//      by an unreleased day of the same group): for each day export (which closes the day
//      on every realtime shard first: POST /close?day=, export.cc) and segment; then — with
//      the last group — the late data of every API (late.cc); compact, merge, publish
//      (which closes through its last day first), release through the group's last day;
//   5. POST /late/release to every API merged (ReleaseLate).
//
// With --executor slurm, step 4 runs as a graph of Slurm jobs (slurm_executor.h); the other
// steps run here either way.
//
// Every step is idempotent and checks what is already done, so after a failure or a kill
// the next run (the same command, or the next night's) completes the work: closing is
// idempotent, an export on disk is re-verified and kept, a segmented day or part is
// skipped, a merge of the same segments and a publish of the same content are no-ops, and
// release frees only days the live manifest records from that shard's ring.
#include <algorithm>
#include <cstdio>

#include "keyformat/day_ring.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/cluster_view.h"
#include "rebuild/day_plan.h"
#include "rebuild/commands.h"
#include "rebuild/late.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/slurm_executor.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

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

// Step 3: each part (a held day the archive owns, missing from the work directory) exported
// from its shard alone and segmented as an addition.
Status AddParts(const Options& options, WorkDir* work, const std::vector<DayShard>& parts) {
  for (const DayShard& part : parts) {
    Options one = options;
    one.day = part.day;
    one.shard = part.shard;
    if (Status s = RunStep("export", one, work); !s.ok()) return s;
    if (Status s = RunStep("segment", one, work); !s.ok()) return s;
  }
  return Status::OK();
}

// Steps 0 and 1: the fence, then the plan. Every shard closes through H and through the
// night's last day BEFORE the plan reads what the shards hold: from then on no day this
// night archives or owns can enter realtime (an increment for one is late data), so what
// the plan reads is final. Planned first, a day a shard took while the night ran — an API
// delivering a down shard's backlog as it came back — was in no plan, and the publish
// refused it (held, not merged) and failed the night (the cluster simulation, seed 231).
Result<NightPlan> PlanAndFence(const Options& options, WorkDir* work, Day through, Day archive_last) {
  Result<std::vector<SegmentInfo>> segments = work->Segments();
  if (!segments.ok()) return segments.status();
  Day work_last = 0;
  if (const std::string last = LastCoveredDay(*segments); !last.empty()) work_last = Day(*ParseDay(last));
  Result<ClusterView> cluster = ReadCluster(options, "nightly");
  if (!cluster.ok()) return cluster.status();
  const Day fence_day = std::max({archive_last, work_last, through});
  std::vector<uint32_t> fence;
  for (uint32_t k = 0; k < cluster->size(); ++k) {
    if ((*cluster)[k].closed_through < fence_day) fence.push_back(k);
  }
  if (!fence.empty()) {
    if (Status s = CloseThrough(options, fence, fence_day); !s.ok()) return s.Prefixed("fence: ");
    std::fprintf(stderr, "clickatron-rebuild: nightly: %zu realtime shard(s) closed through %s\n", fence.size(),
                 FormatDay(fence_day).c_str());
    cluster = ReadCluster(options, "nightly");
    if (!cluster.ok()) return cluster.status();
  }
  return PlanNight(through, archive_last, work_last, ExportsOf(*segments), *cluster);
}

}  // namespace

Status RunNightly(const Options& options, WorkDir* work) {
  if (options.day != 0 && options.through != 0 && options.day != options.through) {
    return Status::Error("--day " + FormatDay(options.day) + " and --through " + FormatDay(options.through) +
                         " disagree (--day means --through for nightly)");
  }
  const Day through = options.through ? options.through : options.day ? options.day : DefaultThroughDay();
  Progress progress("nightly " + FormatDay(through));

  // 0, 1. What is archived, what the work directory and realtime hold: the plan; the fence.
  Result<std::optional<Manifest>> live = LiveManifest(*work);
  if (!live.ok()) return live.status();
  const Day archive_last = *live ? Day(*ParseDay((*live)->last_day)) : Day(0);
  Result<NightPlan> plan = PlanAndFence(options, work, through, archive_last);
  if (!plan.ok()) return plan.status();
  const std::vector<Day>& days = plan->new_days;

  // 2. What the live generation already holds.
  if (*live) {
    Options release = options;
    release.through = std::min<Day>(through, archive_last);
    if (Status s = RunStep("release", release, work); !s.ok()) return s;
  }

  // 3. The parts of owned days realtime took.
  if (Status s = AddParts(options, work, plan->parts); !s.ok()) return s;

  // 4. The new days, a group at a time; the late data with the last group.
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

  // 5. The APIs may drop the late entries the live generation holds.
  Result<std::optional<Manifest>> published = LiveManifest(*work);
  if (!published.ok()) return published.status();
  if (*published) ReleaseLate(options, **published);
  std::string text = days.empty() ? "done: no day to archive through " + FormatDay(through)
                                  : "done: archived " + std::to_string(days.size()) + " day(s) " +
                                        FormatDay(days.front()) + ".." + FormatDay(days.back());
  if (!plan->parts.empty()) {
    text += "; added realtime's part of " + std::to_string(plan->parts.size()) + " owned day(s) (" +
            FormatDayShards(plan->parts) + ")";
  }
  progress.Summary(text);
  return Status::OK();
}

}  // namespace clickatron::rebuild
