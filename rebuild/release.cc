// `release --through D`: frees the realtime slots of days <= D that the archive holds for
// good, so the API never finds an hour in neither tier (docs/architecture.md#the-watermark)
// and no day is dropped from the realtime tier before it was exported.
//
// It refuses, naming why, unless the live archive generation holds D (its manifest's
// last_day >= D) and every archive replica of the config already serves a generation that
// does (its /stats last_day). Then it reads every realtime shard's /stats (a shard whose
// /stats cannot be read fails the step: there is no guessing which days it holds) and
// plans before releasing anything (day_plan.h PlanRelease):
//
//   slot state  day <= D, the live manifest holds it from    day <= D, not held
//               this shard's ring
//   closed      POST /release?day=                          left: the nightly exports and
//                                                           adds it first, then releases it
//   open        left: not closed (the nightly closes it)    left
//   released, empty, days > D: left alone
//
// What is left is said in the summary, and is not an error: the nightly that runs release
// converges on its own (day_plan.h). A 404 to POST /release means the slot has moved on
// meanwhile, which is what release wanted anyway.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "base/clip.h"
#include "keyformat/manifest.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/cluster_view.h"
#include "rebuild/day_plan.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"
#include "wire/generation.h"

namespace clickatron::rebuild {
namespace {

// How long release must still wait before `through` may leave realtime: until every archive
// replica has served a generation holding it for kReleaseAfterServedMs (a replica that does
// not say how long, an older server, counts as just reloaded). Fails, naming the replica,
// when one cannot be read or serves an older last day.
Result<int64_t> LeaseLeft(const Options& options, const std::string& through) {
  int64_t wait_ms = 0;
  for (const auto& replicas : options.archive) {
    for (const net::HostPort& host : replicas) {
      Result<HttpResult> r = HttpCall(host, "GET", "/stats", options.timeout_ms);
      if (!r.ok()) return Status::Error("refusing to release: " + r.status().message());
      Result<wire::ArchiveStatsFields> stats = wire::ReadArchiveStats(r->body);
      const std::string served = stats.ok() ? stats->last_day : "";
      if (r->status != 200 || served.empty() || served < through) {
        return Status::Error("refusing to release " + through + ": archive " + host.ToString() +
                             " serves last day '" + served + "' (run publish first)");
      }
      wait_ms = std::max(wait_ms, wire::kReleaseAfterServedMs - std::max<int64_t>(stats->served_ms, 0));
    }
  }
  return wait_ms;
}

// POST /release of each planned (day, shard), the shards in parallel; (*released)[n]: the
// days shard n released (a 404, nothing to release, is no error).
Status ReleaseDays(const Options& options, const ReleasePlan& plan, std::vector<std::vector<std::string>>* released) {
  std::vector<std::vector<std::string>> days(options.realtime.size());
  for (const DayShard& p : plan.release) days[p.shard].push_back(FormatDay(p.day));
  return RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    for (const std::string& day : days[n]) {
      Result<HttpResult> r = HttpCall(options.realtime[n], "POST", "/release?day=" + day, options.timeout_ms);
      if (!r.ok()) return r.status();
      if (r->status == 200) {
        (*released)[n].push_back(day);
      } else if (r->status != 404) {
        return Status::Error(RealtimeShardName(options, n) + " refused to release " + day + ": HTTP " +
                             std::to_string(r->status) + " " + ClippedLine(r->body, 200));
      }
    }
    return Status::OK();
  });
}

std::string ReleaseSummary(const std::vector<std::vector<std::string>>& released, const ReleasePlan& plan,
                           const std::string& through, const std::string& live, const std::string& last_day) {
  std::string text;
  size_t count = 0;
  for (size_t n = 0; n < released.size(); ++n) {
    for (const std::string& d : released[n]) {
      text += (count++ ? ", " : "") + d + "@" + std::to_string(n);
    }
  }
  std::string left;
  if (!plan.open.empty()) left += "; left open (the nightly closes them): " + FormatDayShards(plan.open);
  if (!plan.unmerged.empty()) {
    left += "; left closed, not in the live generation yet (the nightly adds them): " + FormatDayShards(plan.unmerged);
  }
  return "released " + std::to_string(count) + " slot(s) through " + through +
         (count ? " (" + text + ")" : "") + "; archive generation " + live + " holds through " + last_day + left;
}

}  // namespace

Status RunRelease(const Options& options, WorkDir* work) {
  const std::string through = FormatDay(options.through);
  Progress progress("release");
  Result<std::optional<Manifest>> manifest = LiveManifest(*work);
  if (!manifest.ok()) return manifest.status();
  if (!*manifest) return Status::Error("nothing is published in " + work->root() + ": refusing to release " + through);
  const std::string live = (*manifest)->generation;
  const std::string last_day = (*manifest)->last_day;
  if (last_day < through) {
    return Status::Error("the live generation " + live + " holds days through " + last_day +
                         " only: refusing to release " + through);
  }
  // A replica that missed its reload (a publish killed after the flip of DIR/current, before
  // the reloads) is asked once to load the live generation: else every later night would
  // refuse here, and no night would publish again to reload it. Best effort: LeaseLeft
  // below says which replica still serves an older day.
  for (const auto& replicas : options.archive) {
    for (const net::HostPort& host : replicas) (void)ReloadOne(host, live, options.timeout_ms);
  }
  // Every replica serves a generation holding `through`, and has for the lease: no API can
  // still take an older generation as served (wire/generation.h). After the wait
  // the replicas are checked again (one may have reloaded meanwhile), not waited for again.
  Result<int64_t> wait_ms = LeaseLeft(options, through);
  if (!wait_ms.ok()) return wait_ms.status();
  if (*wait_ms > 0) {
    std::fprintf(stderr, "clickatron-rebuild: release: waiting %lld ms: a generation holding %s has been served for less than %d ms, "
                "and an API may still take the one before as served\n",
                static_cast<long long>(*wait_ms), through.c_str(), wire::kReleaseAfterServedMs);
    std::this_thread::sleep_for(std::chrono::milliseconds(*wait_ms));
    if (wait_ms = LeaseLeft(options, through); !wait_ms.ok()) return wait_ms.status();
  }
  // Every shard's /stats first: one that cannot be read releases nothing.
  Result<ClusterView> cluster = ReadCluster(options, "refusing to release");
  if (!cluster.ok()) return cluster.status();
  const ReleasePlan plan = PlanRelease(options.through, (*manifest)->exports, *cluster);
  std::vector<std::vector<std::string>> released(options.realtime.size());
  if (Status s = ReleaseDays(options, plan, &released); !s.ok()) return s;
  progress.Summary(ReleaseSummary(released, plan, through, live, last_day));
  return Status::OK();
}

}  // namespace clickatron::rebuild
