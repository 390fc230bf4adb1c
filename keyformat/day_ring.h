// The day ring: a realtime shard holds kRingSlots days, day d (days since 1970-01-01 UTC,
// from a key's YMDH) in slot d % kRingSlots (docs/architecture.md#the-day-ring-realtime).
//
//   slot 0: days = 0 (mod 3)   slot 1: days = 1 (mod 3)   slot 2: days = 2 (mod 3)
//
// Three because the API accepts timestamps from yesterday 00:00 UTC to tomorrow 23:59:59
// UTC: three live days. Three tiers count on the same ring: the realtime server keeps one
// database per slot, the API's sender never puts two days of one slot in a round, and
// rebuild's release frees at most the last kRingSlots days of a shard.
#pragma once

#include <cstdint>

namespace clickatron {

inline constexpr int kRingSlots = 3;

// The slot that holds day d. REQUIRES: day >= 0.
inline int SlotOfDay(int64_t day) { return static_cast<int>(day % kRingSlots); }

}  // namespace clickatron
