// `release --through D`: frees the realtime slots of days ≤ D — only when the live
// archive generation holds them (its manifest's last_day ≥ D) and every archive replica
// of the config already serves a generation that does (its /stats last_day), so the API
// never finds an hour in neither tier (docs/architecture.md#the-watermark).
//
// Which days a realtime shard still holds comes from its /stats (slots with day and
// state); each open or closed day ≤ D is released with POST /release?day= (the shard
// releases a closed day only: export closed it). A 404 means the slot has
// moved on meanwhile, which is what release wanted anyway.
#include <cstdio>
#include <set>

#include "base/clip.h"
#include "keyformat/day_ring.h"
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

Status RunRelease(const Options& options, WorkDir* work) {
  const std::string through = FormatDay(options.through);
  Progress progress("release");
  Result<std::string> live = LiveGeneration(*work);
  if (!live.ok()) return live.status();
  if (live->empty()) return Status::Error("nothing is published in " + work->root() + ": refusing to release " + through);
  const std::string manifest_path = work->Path(std::string("current/") + kManifestName);
  Result<std::string> manifest_text = ReadSmallFile(manifest_path);
  if (!manifest_text.ok()) return manifest_text.status();
  Result<Manifest> manifest = ParseManifest(*manifest_text);
  if (!manifest.ok()) return manifest.status().Prefixed(manifest_path + ": ");
  const std::string last_day = manifest->last_day;
  if (last_day < through) {
    return Status::Error("the live generation " + *live + " holds days through " + last_day +
                         " only: refusing to release " + through);
  }
  for (const auto& replicas : options.archive) {
    for (const net::HostPort& host : replicas) {
      Result<HttpResult> r = HttpCall(host, "GET", "/stats", options.timeout_ms);
      if (!r.ok()) return Status::Error("refusing to release: " + r.status().message());
      Result<net::ArchiveStatsFields> stats = net::ReadArchiveStats(r->body);
      const std::string served = stats.ok() ? stats->last_day : "";
      if (r->status != 200 || served.empty() || served < through) {
        return Status::Error("refusing to release " + through + ": archive " + host.ToString() + " serves last day '" +
                             served + "' (run publish first)");
      }
    }
  }
  std::vector<std::vector<std::string>> released(options.realtime.size());
  Status result = RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    const net::HostPort& host = options.realtime[n];
    std::set<std::string> days;
    Result<HttpResult> stats = HttpCall(host, "GET", "/stats", options.timeout_ms);
    if (!stats.ok()) return stats.status();
    const Result<std::vector<net::RealtimeSlotFields>> slots = net::ReadRealtimeSlots(stats->body);
    if (stats->status == 200 && slots.ok() && !slots->empty()) {
      for (const net::RealtimeSlotFields& slot : *slots) {
        if (!slot.day.empty() && slot.day <= through && (slot.state == "open" || slot.state == "closed")) {
          days.insert(slot.day);
        }
      }
    } else {
      // Unknown /stats shape: try every day the ring can hold up to D.
      for (int back = 0; back < kRingSlots; ++back) days.insert(FormatDay(int64_t(options.through) - back));
    }
    for (const std::string& day : days) {
      Result<HttpResult> r = HttpCall(host, "POST", "/release?day=" + day, options.timeout_ms);
      if (!r.ok()) return r.status();
      if (r->status == 200) {
        released[n].push_back(day);
      } else if (r->status != 404) {
        return Status::Error("realtime shard " + std::to_string(n) + " (" + host.ToString() + ") refused to release " + day +
                             ": HTTP " + std::to_string(r->status) + " " + ClippedLine(r->body, 200));
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
                   (count ? " (" + text + ")" : "") + "; archive generation " + *live + " holds through " + last_day);
  return Status::OK();
}

}  // namespace clickatron::rebuild
