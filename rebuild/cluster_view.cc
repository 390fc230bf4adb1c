#include "rebuild/cluster_view.h"

#include "base/clip.h"
#include "keyformat/hex64.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/tasks.h"

namespace clickatron::rebuild {
namespace {

Result<ShardView> ViewOf(const wire::RealtimeStatsFields& stats) {
  ShardView view;
  if (!stats.ring.empty()) {
    Result<uint64_t> ring = ParseHex64(stats.ring);
    if (!ring.ok()) return Status::Error("ring '" + stats.ring + "' is not 16 hex digits");
    view.ring = *ring;
  }
  if (!stats.closed_through.empty()) {
    Result<int64_t> w = ParseDay(stats.closed_through);
    if (!w.ok()) return Status::Error("closed_through: " + w.status().message());
    view.closed_through = Day(*w);
  }
  for (const wire::RealtimeSlotFields& slot : stats.slots) {
    if (slot.day.empty()) continue;
    Result<int64_t> d = ParseDay(slot.day);
    if (!d.ok()) return Status::Error("a slot holds a day '" + slot.day + "': " + d.status().message());
    HeldState state;
    if (slot.state == "open") {
      state = HeldState::kOpen;
    } else if (slot.state == "closed") {
      state = HeldState::kClosed;
    } else if (slot.state == "released") {
      state = HeldState::kReleased;
    } else {
      return Status::Error("slot of " + slot.day + " is in an unknown state '" + slot.state + "'");
    }
    view.held.push_back({Day(*d), state});
  }
  return view;
}

}  // namespace

std::string RealtimeShardName(const Options& options, size_t n) {
  return "realtime shard " + std::to_string(n) + " (" + options.realtime[n].ToString() + ")";
}

Result<ClusterView> ReadCluster(const Options& options, const std::string& why) {
  ClusterView cluster(options.realtime.size());
  Status s = RunTasks(options.realtime.size(), options.jobs, [&](size_t n) -> Status {
    Result<wire::RealtimeStatsFields> stats = ReadRealtimeStatsOf(options.realtime[n], options.timeout_ms);
    Result<ShardView> view = stats.ok() ? ViewOf(*stats) : Result<ShardView>(stats.status());
    if (!view.ok()) {
      return Status::Error(why + ": the /stats of " + RealtimeShardName(options, n) + " cannot be read: " +
                           view.status().message() + "; start it and run this again (its host lost with its "
                           "disk: docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host)");
    }
    cluster[n] = std::move(view).value();
    return Status::OK();
  });
  if (!s.ok()) return s;
  return cluster;
}

Status CloseThrough(const Options& options, const std::vector<uint32_t>& shards, Day day) {
  const std::string path = "/close?day=" + FormatDay(day);
  return RunTasks(shards.size(), options.jobs, [&](size_t i) -> Status {
    const uint32_t n = shards[i];
    Result<HttpResult> r = HttpCall(options.realtime[n], "POST", path, options.timeout_ms);
    if (!r.ok()) return Status::Error("closing through " + FormatDay(day) + " on " + RealtimeShardName(options, n) + ": " + r.status().message());
    if (r->status != 200) {
      return Status::Error(RealtimeShardName(options, n) + " refused POST " + path + ": HTTP " +
                           std::to_string(r->status) + ": " + ClippedLine(r->body, 200));
    }
    return Status::OK();
  });
}

}  // namespace clickatron::rebuild
