#include "realtime/day_state.h"

#include <gtest/gtest.h>

namespace clickatron::realtime {
namespace {

TEST(DayState, EmptySlotIsResetForAnyDay) {
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, 20000), DayAction::kReset);
}

TEST(DayState, SameDayAppliesWhateverTheState) {
  EXPECT_EQ(DecideDay(20000, SlotState::kOpen, 20000), DayAction::kApply);
  EXPECT_EQ(DecideDay(20000, SlotState::kReleased, 20000), DayAction::kApply);
}

TEST(DayState, OlderReleasedDayIsReset) {
  EXPECT_EQ(DecideDay(20000, SlotState::kReleased, 20003), DayAction::kReset);
}

TEST(DayState, OlderOpenDayRefusesUntilReleased) {
  EXPECT_EQ(DecideDay(20000, SlotState::kOpen, 20003), DayAction::kNotReleased);
}

TEST(DayState, NewerDayMeansExpired) {
  EXPECT_EQ(DecideDay(20003, SlotState::kOpen, 20000), DayAction::kExpired);
  EXPECT_EQ(DecideDay(20003, SlotState::kReleased, 20000), DayAction::kExpired);
}

TEST(DayState, SlotOfDayAndNames) {
  EXPECT_EQ(SlotOfDay(20000), 20000 % 3);
  EXPECT_EQ(SlotOfDay(0), 0);
  SlotState s;
  EXPECT_TRUE(ParseSlotState(SlotStateName(SlotState::kReleased), &s));
  EXPECT_EQ(s, SlotState::kReleased);
  EXPECT_TRUE(ParseSlotState("open", &s));
  EXPECT_EQ(s, SlotState::kOpen);
  EXPECT_FALSE(ParseSlotState("empty", &s));
  EXPECT_FALSE(ParseSlotState("Open", &s));
}

}  // namespace
}  // namespace clickatron::realtime
