// One owner per day: what the rebuild does to a cluster so that every UTC day is owned by
// exactly one tier and every acknowledged increment reaches the archive exactly once
// (docs/architecture.md#one-owner-per-day, which has the whole protocol as a table).
//
// The archive owns every day up to its last day A (the live manifest's `last_day`, which
// the API's queries take as the watermark); realtime owns the later ones. Three records say
// where a day is:
//
//   the live manifest   A, and which realtime shard's export of which day it merged, from
//                       which ring (keyformat/manifest.h MergedExports)
//   the work directory  what the next publish will hold: the segments' days and exports
//   each realtime shard its closed-through W, its ring id, the day and state of each slot
//
// The rules this file decides (each pinned by day_plan_test.cc):
//
//   H = max(A, the work directory's newest day)   the day the archive owns, or will at the
//                                                  next publish
//   fence      every shard with W < H closes through H first (the nightly closes through
//              max(H, its last day) before it reads the view it plans from): from then on an increment
//              for an owned day is late data (the API keeps it, the nightly merges it)
//   parts      a day <= H that a shard holds (open or closed, not released) and that the
//              work directory does not hold from that shard's ring is exported from that
//              shard alone and ADDED to the archive: the increments it took before the
//              fence (a publish the shard was not told of, a replacement shard's first
//              writes) are never stranded
//   new days   the days after H through the night's last day, from the oldest day a
//              shard holds, are archived whole (every shard's export)
//   publish    of a generation through L: refused while a day <= L is held unmerged
//              (UnmergedParts), after the fence through L
//   release    frees a closed slot <= D whose day the live manifest holds from that
//              shard's ring; an open slot, or a closed one not merged yet, is left for the
//              nightly (which exports it first), never refused and never freed
//
// Pure code over values read from the cluster: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keyformat/manifest.h"
#include "rebuild/record_sorter.h"

namespace clickatron::rebuild {

enum class HeldState { kOpen, kClosed, kReleased };

// A day a realtime slot holds.
struct HeldDay {
  Day day = 0;
  HeldState state = HeldState::kOpen;
};

// One realtime shard as its /stats shows it.
struct ShardView {
  uint64_t ring = 0;         // its data directory's id; 0 from a server that does not say
  Day closed_through = 0;    // W; 0 when it never closed a day
  std::vector<HeldDay> held; // the days its slots hold (empty slots left out)
};
using ClusterView = std::vector<ShardView>;  // by realtime shard

// One realtime shard's part of one day.
struct DayShard {
  Day day = 0;
  uint32_t shard = 0;
  auto operator<=>(const DayShard&) const = default;
};

// The days <= last that some shard holds open or closed and `merged` does not hold from that
// shard's ring: what a generation through `last` made of `merged` would leave behind in the
// realtime tier. Ordered by day, then shard.
std::vector<DayShard> UnmergedParts(Day last, const MergedExports& merged, const ClusterView& cluster);

struct NightPlan {
  Day owned_through = 0;          // H (0: the archive owns no day and the work dir holds none)
  std::vector<uint32_t> fence;    // shards to close through H first
  std::vector<DayShard> parts;    // held days <= H not in the work directory: export and add
  std::vector<Day> new_days;      // days after H through `through`, oldest first: archive whole
};

// archive_last: A (0 when nothing is published); work_last: the work directory's newest day
// (work_dir.h LastCoveredDay; 0 when none); work: the exports its segments hold.
NightPlan PlanNight(Day through, Day archive_last, Day work_last, const MergedExports& work,
                    const ClusterView& cluster);

// What `release --through D` frees, and what it leaves and why.
struct ReleasePlan {
  std::vector<DayShard> release;  // closed slots <= D the live generation holds
  std::vector<DayShard> open;     // open slots <= D: not closed yet (the nightly closes them)
  std::vector<DayShard> unmerged; // closed slots <= D the live generation lacks: exported first
};
ReleasePlan PlanRelease(Day through, const MergedExports& live, const ClusterView& cluster);

// "2026-03-10@1, 2026-03-11@0" (day@shard), for messages.
std::string FormatDayShards(const std::vector<DayShard>& parts);

}  // namespace clickatron::rebuild
