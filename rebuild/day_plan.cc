#include "rebuild/day_plan.h"

#include <algorithm>

#include "keyformat/ymdh.h"

namespace clickatron::rebuild {
namespace {

bool Holds(const MergedExports& merged, Day day, uint32_t shard, uint64_t ring, size_t shards) {
  return merged.Holds(FormatDay(day), shard, ring, shards);
}

}  // namespace

std::vector<DayShard> UnmergedParts(Day last, const MergedExports& merged, const ClusterView& cluster) {
  std::vector<DayShard> out;
  for (uint32_t k = 0; k < cluster.size(); ++k) {
    for (const HeldDay& h : cluster[k].held) {
      if (h.day > last || h.state == HeldState::kReleased) continue;
      if (!Holds(merged, h.day, k, cluster[k].ring, cluster.size())) out.push_back({h.day, k});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

NightPlan PlanNight(Day through, Day archive_last, Day work_last, const MergedExports& work,
                    const ClusterView& cluster) {
  NightPlan plan;
  plan.owned_through = std::max(archive_last, work_last);
  const Day h = plan.owned_through;
  Day oldest_held = 0;
  for (uint32_t k = 0; k < cluster.size(); ++k) {
    if (h != 0 && cluster[k].closed_through < h) plan.fence.push_back(k);
    for (const HeldDay& held : cluster[k].held) {
      if (oldest_held == 0 || held.day < oldest_held) oldest_held = held.day;
    }
  }
  if (h != 0) plan.parts = UnmergedParts(h, work, cluster);
  // A day no shard holds, older than every day they hold, was never written anywhere (a
  // first write opens a slot; a slot moves on only once released): nothing to export.
  if (oldest_held == 0) return plan;
  const Day first = std::max<Day>(oldest_held, Day(h + 1));
  for (Day d = first; d <= through && d >= first; ++d) plan.new_days.push_back(d);
  return plan;
}

ReleasePlan PlanRelease(Day through, const MergedExports& live, const ClusterView& cluster) {
  ReleasePlan plan;
  for (uint32_t k = 0; k < cluster.size(); ++k) {
    for (const HeldDay& h : cluster[k].held) {
      if (h.day > through || h.state == HeldState::kReleased) continue;
      if (h.state == HeldState::kOpen) {
        plan.open.push_back({h.day, k});
      } else if (Holds(live, h.day, k, cluster[k].ring, cluster.size())) {
        plan.release.push_back({h.day, k});
      } else {
        plan.unmerged.push_back({h.day, k});
      }
    }
  }
  for (auto* v : {&plan.release, &plan.open, &plan.unmerged}) std::sort(v->begin(), v->end());
  return plan;
}

std::string FormatDayShards(const std::vector<DayShard>& parts) {
  std::string out;
  for (const DayShard& p : parts) {
    if (!out.empty()) out += ", ";
    out += FormatDay(p.day) + "@" + std::to_string(p.shard);
  }
  return out;
}

}  // namespace clickatron::rebuild
