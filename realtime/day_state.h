// The day state machine of one ring slot (docs/architecture.md#the-day-ring-realtime).
//
// Day d (days since 1970-01-01 UTC, from a key's ymdh) lives in slot SlotOfDay(d) of the
// day ring (keyformat/day_ring.h). A slot holds one day and a state: empty (a new
// database), open, or released (the nightly rebuild has archived the day). What a write
// for day d does depends only on what its slot holds:
//
//   slot holds d                      → apply (whatever the state: the day is still live)
//   slot empty, or an older released  → reset: wipe the slot and open it for d, then apply
//   slot holds an older, open day     → refuse, 503 SLOT_NOT_RELEASED (sender retries later)
//   slot holds a newer day            → refuse, 409 DAY_EXPIRED (d left the ring for good)
//
// Pure code: ring.cc applies the decision, day_state_test.cc pins every case.
#pragma once

#include <cstdint>
#include <string_view>

#include "keyformat/day_ring.h"

namespace clickatron::realtime {

inline constexpr int64_t kNoDay = -1;

enum class SlotState { kEmpty, kOpen, kReleased };
enum class DayAction { kApply, kReset, kNotReleased, kExpired };

// What a write for `day` does to a slot holding (slot_day, state). slot_day is kNoDay
// exactly when state is kEmpty.
DayAction DecideDay(int64_t slot_day, SlotState state, int64_t day);

// "empty", "open", "released": the words /stats and the slot's metadata use.
std::string_view SlotStateName(SlotState state);
// Inverse of SlotStateName for "open" and "released"; false for anything else.
bool ParseSlotState(std::string_view name, SlotState* state);

}  // namespace clickatron::realtime
