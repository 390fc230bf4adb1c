#include "keyformat/day_ring.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(DayRing, HoldsThreeDaysOnePerSlot) {
  EXPECT_EQ(kRingSlots, 3);
  EXPECT_EQ(SlotOfDay(0), 0);
  EXPECT_EQ(SlotOfDay(15424), 1);  // 2012-03-25
  EXPECT_EQ(SlotOfDay(20000), 20000 % 3);
  // Consecutive days take every slot once; the day kRingSlots later takes the same slot.
  for (int64_t d = 15424; d < 15424 + 30; ++d) {
    EXPECT_NE(SlotOfDay(d), SlotOfDay(d + 1));
    EXPECT_NE(SlotOfDay(d), SlotOfDay(d + 2));
    EXPECT_EQ(SlotOfDay(d), SlotOfDay(d + kRingSlots));
    EXPECT_GE(SlotOfDay(d), 0);
    EXPECT_LT(SlotOfDay(d), kRingSlots);
  }
}

}  // namespace
}  // namespace clickatron
