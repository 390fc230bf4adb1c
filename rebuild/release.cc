// `release --through D`: frees the realtime slots of days ≤ D that the archive holds for
// good, so the API never finds an hour in neither tier (docs/architecture.md#the-watermark)
// and no day is dropped from the realtime tier before it was exported.
//
// It refuses, naming why, unless the live archive generation holds D (its manifest's
// last_day ≥ D) and every archive replica of the config already serves a generation that
// does (its /stats last_day). Then it reads every realtime shard's /stats (a shard whose
// /stats cannot be read fails the step: there is no guessing which days it holds) and
// plans, before releasing anything:
//
//   slot state  day ≤ D, and the live manifest records the day   day ≤ D, not recorded
//   closed      POST /release?day=                                 refused
//   open        refused (not closed: close and archive it first)   refused
//   released, empty, days > D: left alone
//
// "Records the day" means a `day` line with an export digest from every realtime shard of
// the config (docs/formats.md#manifest): the day was closed, exported from each shard and
// merged into the live generation. A 404 to POST /release means the slot has moved on
// meanwhile, which is what release wanted anyway.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "archive/served_generation.h"
#include "base/clip.h"
#include "keyformat/manifest.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

// "realtime shard 1 (10.0.0.2:7101)".
std::string ShardName(const Options& options, size_t n) {
  return "realtime shard " + std::to_string(n) + " (" + options.realtime[n].ToString() + ")";
}

// The days of shard n's closed slots to release, or why none may be.
Result<std::set<std::string>> PlanShard(const Options& options, size_t n, const Manifest& manifest,
                                        const std::string& through) {
  Result<std::vector<net::RealtimeSlotFields>> slots = ReadRealtimeSlotsOf(options.realtime[n], options.timeout_ms);
  if (!slots.ok()) {
    return Status::Error("refusing to release: the /stats of " + ShardName(options, n) +
                         " cannot be read: " + slots.status().message());
  }
  std::set<std::string> days;
  for (const net::RealtimeSlotFields& slot : *slots) {
    if (slot.day.empty() || slot.day > through) continue;
    const bool recorded = manifest.MergedFromEveryShard(slot.day, options.realtime.size());
    if (slot.state == "open") {
      return Status::Error("refusing to release: " + ShardName(options, n) + " holds " + slot.day +
                           " open; a day is released only once closed and archived (run clickatron-rebuild nightly)");
    }
    if (slot.state != "closed") continue;
    if (!recorded) {
      return Status::Error("refusing to release: " + ShardName(options, n) + " holds " + slot.day +
                           " closed, but the live manifest does not record it merged from all " +
                           std::to_string(options.realtime.size()) +
                           " realtime shard(s) (no 'day = " + slot.day +
                           " ...' line with a digest per shard): run clickatron-rebuild nightly");
    }
    days.insert(slot.day);
  }
  return days;
}

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
      Result<net::ArchiveStatsFields> stats = net::ReadArchiveStats(r->body);
      const std::string served = stats.ok() ? stats->last_day : "";
      if (r->status != 200 || served.empty() || served < through) {
        return Status::Error("refusing to release " + through + ": archive " + host.ToString() +
                             " serves last day '" + served + "' (run publish first)");
      }
      wait_ms = std::max(wait_ms, archive::kReleaseAfterServedMs - std::max<int64_t>(stats->served_ms, 0));
    }
  }
  return wait_ms;
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
  // still take an older generation as served (archive/served_generation.h). After the wait
  // the replicas are checked again (one may have reloaded meanwhile), not waited for again.
  Result<int64_t> wait_ms = LeaseLeft(options, through);
  if (!wait_ms.ok()) return wait_ms.status();
  if (*wait_ms > 0) {
    std::fprintf(stderr, "clickatron-rebuild: release: waiting %lld ms: a generation holding %s has been served for less than %d ms, "
                "and an API may still take the one before as served\n",
                static_cast<long long>(*wait_ms), through.c_str(), archive::kReleaseAfterServedMs);
    std::this_thread::sleep_for(std::chrono::milliseconds(*wait_ms));
    if (wait_ms = LeaseLeft(options, through); !wait_ms.ok()) return wait_ms.status();
  }
  // Every shard's plan first: one refusal anywhere releases nothing.
  std::vector<std::set<std::string>> plan(options.realtime.size());
  Status planned = RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    Result<std::set<std::string>> days = PlanShard(options, n, **manifest, through);
    if (!days.ok()) return days.status();
    plan[n] = std::move(days).value();
    return Status::OK();
  });
  if (!planned.ok()) return planned;
  std::vector<std::vector<std::string>> released(options.realtime.size());
  Status result = RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    for (const std::string& day : plan[n]) {
      Result<HttpResult> r = HttpCall(options.realtime[n], "POST", "/release?day=" + day, options.timeout_ms);
      if (!r.ok()) return r.status();
      if (r->status == 200) {
        released[n].push_back(day);
      } else if (r->status != 404) {
        return Status::Error(ShardName(options, n) + " refused to release " + day + ": HTTP " +
                             std::to_string(r->status) + " " + ClippedLine(r->body, 200));
      }
    }
    return Status::OK();
  });
  if (!result.ok()) return result;
  std::string text;
  size_t count = 0;
  for (size_t n = 0; n < released.size(); ++n) {
    for (const std::string& d : released[n]) {
      text += (count++ ? ", " : "") + d + "@" + std::to_string(n);
    }
  }
  progress.Summary("released " + std::to_string(count) + " slot(s) through " + through +
                   (count ? " (" + text + ")" : "") + "; archive generation " + live + " holds through " + last_day);
  return Status::OK();
}

}  // namespace clickatron::rebuild
