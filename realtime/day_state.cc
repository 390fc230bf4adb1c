#include "realtime/day_state.h"

namespace clickatron::realtime {

DayAction DecideDay(int64_t slot_day, SlotState state, int64_t day) {
  if (state == SlotState::kEmpty) return DayAction::kReset;
  if (slot_day == day) return DayAction::kApply;
  if (slot_day > day) return DayAction::kExpired;
  return state == SlotState::kReleased ? DayAction::kReset : DayAction::kNotReleased;
}

std::string_view SlotStateName(SlotState state) {
  switch (state) {
    case SlotState::kEmpty: return "empty";
    case SlotState::kOpen: return "open";
    case SlotState::kReleased: return "released";
  }
  return "empty";
}

bool ParseSlotState(std::string_view name, SlotState* state) {
  if (name == "open") {
    *state = SlotState::kOpen;
    return true;
  }
  if (name == "released") {
    *state = SlotState::kReleased;
    return true;
  }
  return false;
}

}  // namespace clickatron::realtime
