// Reading the realtime tier into a ClusterView (day_plan.h), and the fence: the two calls
// every step of the day protocol makes to the realtime shards besides export and release
// (docs/architecture.md#one-owner-per-day).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "rebuild/day_plan.h"
#include "rebuild/options.h"

namespace clickatron::rebuild {

// "realtime shard 1 (10.0.0.2:7101)".
std::string RealtimeShardName(const Options& options, size_t n);

// Every realtime shard's /stats (in parallel on --jobs threads). One that cannot be read
// fails the whole read, naming it: no step plans with a shard whose days are unknown.
// `why` says what the read is for ("refusing to release").
Result<ClusterView> ReadCluster(const Options& options, const std::string& why);

// POST /close?day=D on each of `shards` (every realtime shard when empty is passed as all):
// each closes every open day <= D and moves its closed-through to D at least. Fails naming
// the first shard that refused or did not answer (the others may be closed: closing is
// idempotent, and a re-run closes the rest).
Status CloseThrough(const Options& options, const std::vector<uint32_t>& shards, Day day);

}  // namespace clickatron::rebuild
