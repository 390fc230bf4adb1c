// The day state machine of one ring slot (docs/realtime.md#day-lifecycle).
//
// Day d (days since 1970-01-01 UTC, from a key's ymdh) lives in slot SlotOfDay(d) of the
// day ring (keyformat/day_ring.h). A slot holds one day and a state:
//
//   empty     a new database, no day yet
//   open      takes writes for its day
//   closed    POST /close covered the day: final, exported as it is, takes no write
//   released  POST /release (of a closed day only): the archive holds it, the slot may be
//             taken over by a newer day
//
// Beside the slots the shard keeps its closed-through watermark W (every day <= W is closed
// for good, closed_days.h) and knows the newest day of the ring N (the newest day a slot
// holds or the write names). A write for day d that is not a duplicate (a batch already
// applied is answered as a duplicate before this table is asked, whatever the state):
//
//   slot holds d, open, d > W          → apply
//   slot holds d, closed or released   → refuse, 409 DAY_CLOSED (late data: the sender keeps it)
//   d <= W                             → refuse, 409 DAY_CLOSED (never reopened once closed)
//   slot holds a newer day             → refuse, 409 DAY_EXPIRED (d left the ring for good)
//   d <= N - 3                         → refuse, 409 DAY_EXPIRED (older than the ring)
//   slot empty, or an older released   → reset: wipe the slot and open it for d, then apply
//   slot holds an older open or closed → refuse, 503 SLOT_NOT_RELEASED (sender retries later)
//
// The first matching row wins. Pure code: ring.cc applies the decision, day_state_test.cc
// pins every case.
#pragma once

#include <cstdint>
#include <string_view>

#include "keyformat/day_ring.h"

namespace clickatron::realtime {

inline constexpr int64_t kNoDay = -1;

enum class SlotState { kEmpty, kOpen, kClosed, kReleased };
enum class DayAction { kApply, kReset, kNotReleased, kExpired, kClosed };

// What a write for `day` does to a slot holding (slot_day, state), given the shard's
// closed-through watermark and the newest day of the ring (each kNoDay when none).
// slot_day is kNoDay exactly when state is kEmpty.
DayAction DecideDay(int64_t slot_day, SlotState state, int64_t day, int64_t closed_through,
                    int64_t newest_day);

// "empty", "open", "closed", "released": the words /stats and the slot's metadata use.
std::string_view SlotStateName(SlotState state);
// Inverse of SlotStateName for "open", "closed" and "released"; false for anything else.
bool ParseSlotState(std::string_view name, SlotState* state);

}  // namespace clickatron::realtime
