#include "realtime/day_state.h"

#include <gtest/gtest.h>

namespace clickatron::realtime {
namespace {

constexpr int64_t D = 20000;
constexpr int64_t kNone = kNoDay;  // no watermark / no newest day

TEST(DayState, EmptySlotIsResetForAnyDayWhenNothingIsClosed) {
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D, kNone, kNone), DayAction::kReset);
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D, D - 1, D), DayAction::kReset);
}

TEST(DayState, SameOpenDayApplies) {
  EXPECT_EQ(DecideDay(D, SlotState::kOpen, D, kNone, D), DayAction::kApply);
  EXPECT_EQ(DecideDay(D, SlotState::kOpen, D, D - 1, D + 2), DayAction::kApply);
}

TEST(DayState, SameDayClosedOrReleasedIsClosed) {
  EXPECT_EQ(DecideDay(D, SlotState::kClosed, D, D, D), DayAction::kClosed);
  EXPECT_EQ(DecideDay(D, SlotState::kReleased, D, D, D + 2), DayAction::kClosed);
  // A released slot written before the watermark existed: still closed.
  EXPECT_EQ(DecideDay(D, SlotState::kReleased, D, kNone, D), DayAction::kClosed);
}

TEST(DayState, OpenSlotAtOrBelowTheWatermarkIsClosed) {
  // Cannot happen through /close (it closes the slots first), but the watermark wins.
  EXPECT_EQ(DecideDay(D, SlotState::kOpen, D, D, D), DayAction::kClosed);
}

TEST(DayState, EmptyOrReleasedSlotIsNeverReopenedAtOrBelowTheWatermark) {
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D, D, kNone), DayAction::kClosed);
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D - 1, D, kNone), DayAction::kClosed);
  EXPECT_EQ(DecideDay(D - 3, SlotState::kReleased, D, D, D), DayAction::kClosed);
  EXPECT_EQ(DecideDay(D - 3, SlotState::kClosed, D, D, D), DayAction::kClosed);
}

TEST(DayState, ClosedWinsOverExpiredAtOrBelowTheWatermark) {
  EXPECT_EQ(DecideDay(D + 3, SlotState::kOpen, D, D, D + 3), DayAction::kClosed);
}

TEST(DayState, NewerDayInTheSlotMeansExpired) {
  EXPECT_EQ(DecideDay(D + 3, SlotState::kOpen, D, kNone, D + 3), DayAction::kExpired);
  EXPECT_EQ(DecideDay(D + 3, SlotState::kClosed, D, kNone, D + 3), DayAction::kExpired);
  EXPECT_EQ(DecideDay(D + 3, SlotState::kReleased, D, D - 1, D + 3), DayAction::kExpired);
}

TEST(DayState, DayOlderThanTheRingIsNeverOpened) {
  // The slot is empty or holds an older released day, but the ring's newest day is 3 or
  // more days ahead: opening d would hold four days at once.
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D, kNone, D + 3), DayAction::kExpired);
  EXPECT_EQ(DecideDay(D - 3, SlotState::kReleased, D, D - 3, D + 5), DayAction::kExpired);
  EXPECT_EQ(DecideDay(kNoDay, SlotState::kEmpty, D, kNone, D + 2), DayAction::kReset);
}

TEST(DayState, OlderReleasedDayIsReset) {
  EXPECT_EQ(DecideDay(D - 3, SlotState::kReleased, D, D - 3, D), DayAction::kReset);
  EXPECT_EQ(DecideDay(D - 3, SlotState::kReleased, D, D - 1, D + 2), DayAction::kReset);
}

TEST(DayState, OlderOpenOrClosedDayRefusesUntilReleased) {
  EXPECT_EQ(DecideDay(D - 3, SlotState::kOpen, D, kNone, D), DayAction::kNotReleased);
  EXPECT_EQ(DecideDay(D - 3, SlotState::kClosed, D, D - 3, D), DayAction::kNotReleased);
}

TEST(DayState, SlotOfDayAndNames) {
  EXPECT_EQ(SlotOfDay(20000), 20000 % 3);
  EXPECT_EQ(SlotOfDay(0), 0);
  SlotState s;
  EXPECT_TRUE(ParseSlotState(SlotStateName(SlotState::kReleased), &s));
  EXPECT_EQ(s, SlotState::kReleased);
  EXPECT_TRUE(ParseSlotState("open", &s));
  EXPECT_EQ(s, SlotState::kOpen);
  EXPECT_TRUE(ParseSlotState("closed", &s));
  EXPECT_EQ(s, SlotState::kClosed);
  EXPECT_EQ(SlotStateName(SlotState::kClosed), "closed");
  EXPECT_FALSE(ParseSlotState("empty", &s));
  EXPECT_FALSE(ParseSlotState("Open", &s));
}

}  // namespace
}  // namespace clickatron::realtime
