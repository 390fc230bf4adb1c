#include "realtime/day_state.h"

namespace clickatron::realtime {

DayAction DecideDay(int64_t slot_day, SlotState state, int64_t day, int64_t closed_through,
                    int64_t newest_day) {
  if (state != SlotState::kEmpty && slot_day == day) {
    return state == SlotState::kOpen && day > closed_through ? DayAction::kApply : DayAction::kClosed;
  }
  if (closed_through != kNoDay && day <= closed_through) return DayAction::kClosed;
  if (state != SlotState::kEmpty && slot_day > day) return DayAction::kExpired;
  if (newest_day != kNoDay && day <= newest_day - kRingSlots) return DayAction::kExpired;
  if (state == SlotState::kEmpty || state == SlotState::kReleased) return DayAction::kReset;
  return DayAction::kNotReleased;
}

std::string_view SlotStateName(SlotState state) {
  switch (state) {
    case SlotState::kEmpty: return "empty";
    case SlotState::kOpen: return "open";
    case SlotState::kClosed: return "closed";
    case SlotState::kReleased: return "released";
  }
  return "empty";
}

bool ParseSlotState(std::string_view name, SlotState* state) {
  for (SlotState s : {SlotState::kOpen, SlotState::kClosed, SlotState::kReleased}) {
    if (name == SlotStateName(s)) {
      *state = s;
      return true;
    }
  }
  return false;
}

}  // namespace clickatron::realtime
