#include "rebuild/day_cover.h"

#include "keyformat/ymdh.h"

namespace clickatron::rebuild {

DayCoverPlan PlanDayCover(const std::map<std::string, Cover>& coverage, const std::vector<Day>& days,
                          const std::string& source) {
  DayCoverPlan plan;
  for (Day day : days) {
    const std::string unit = FormatDay(day);
    auto it = coverage.find(unit);
    if (it == coverage.end()) {
      plan.all_mine = false;
      continue;
    }
    if (it->second.source == source) continue;
    plan.all_mine = false;
    plan.taken.emplace_back(day, it->second);
    plan.to_replace.insert(it->second.segment);
    if (it->second.span != unit && plan.unreplaceable.ok()) {
      plan.unreplaceable = Status::Error("day " + unit + " is already in the compacted segment " +
                                         it->second.segment + "; it cannot be replaced on its own");
    }
  }
  return plan;
}

}  // namespace clickatron::rebuild
