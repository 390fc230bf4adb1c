// How new data from one source (an import's input, or the exports of one day) stands
// against the segments already in the work directory, day by day: days this very source
// already covers (a re-run, nothing to do), days another source covers (to be replaced
// with --replace), and whether such a day can be replaced at all — not when `compact`
// has folded it into a month segment. `import` and `segment` both decide from this.
// Segments of late data cover no day (work_dir.h), so they never count here: late data
// for a day already merged is added to it, not a rival source.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "rebuild/record_sorter.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

struct DayCoverPlan {
  bool all_mine = true;                     // every day is covered by this source already
  std::vector<std::pair<Day, Cover>> taken;  // days covered by another source, in order
  std::set<std::string> to_replace;          // the segments of those days
  // The error for the first taken day that lies in a month segment (OK when none):
  // "day D is already in the compacted segment S; it cannot be replaced on its own".
  Status unreplaceable;
};

// coverage: CoverageOf(the work directory's segments); days: the new data's days.
DayCoverPlan PlanDayCover(const std::map<std::string, Cover>& coverage, const std::vector<Day>& days,
                          const std::string& source);

}  // namespace clickatron::rebuild
