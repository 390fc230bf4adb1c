#include "keyformat/rollup_hours.h"

#include <gtest/gtest.h>

#include <random>

namespace clickatron {
namespace {

TEST(RollupHours, WritesOneColumnPerDayInDayOrder) {
  std::string v;
  AppendRollupMask(&v, 0, '1', (1u << 20) | (1u << 21));
  EXPECT_EQ(v, ".1:3145728");
  RollupHours h{};
  h[2] = 3;
  h[1] = (1u << 20) | (1u << 21);
  h[31] = kAllHoursOfDay;
  v = "x";
  AppendRollupMasks(&v, 1, h);
  EXPECT_EQ(v, "x.1:3145728 .2:3 .v:16777215");
}

TEST(RollupHours, DayAndHourOfAnHourToken) {
  int day = 0, hour = 0;
  EXPECT_TRUE(RollupDayAndHour("c41k", &day, &hour));
  EXPECT_EQ(day, 1);
  EXPECT_EQ(hour, 20);
  EXPECT_TRUE(RollupDayAndHour("zzvn", &day, &hour));  // the year and month are not looked at
  EXPECT_EQ(day, 31);
  EXPECT_EQ(hour, 23);
  for (const char* bad : {"c40k", "c41o", "c4w0", "c41", "c41k0", "c4!0", "c41K"}) {
    EXPECT_FALSE(RollupDayAndHour(bad, &day, &hour)) << bad;
  }
  RollupHours h{};
  EXPECT_TRUE(MarkRollupHour("c41k", &h));
  EXPECT_TRUE(MarkRollupHour("c41l", &h));
  EXPECT_TRUE(MarkRollupHour("c4v0", &h));
  EXPECT_FALSE(MarkRollupHour("c41o", &h));
  RollupHours expected{};
  expected[1] = (1u << 20) | (1u << 21);
  expected[31] = 1;
  EXPECT_EQ(h, expected);
}

TEST(RollupHours, SplitsTheMaskFromTheSums) {
  RollupHours h;
  Result<std::string_view> rest = SplitRollupMask("c41", ".1:3145728 JP:3 US:5", &h);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(rest.value(), "JP:3 US:5");
  EXPECT_EQ(h[1], 3145728u);
  rest = SplitRollupMask("c4", ".1:3145728 .2:3 JP:3 US:7", &h);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest.value(), "JP:3 US:7");
  EXPECT_EQ(h[1], 3145728u);
  EXPECT_EQ(h[2], 3u);
  EXPECT_EQ(h[3], 0u);
  // Sums may cancel to nothing: the mask alone.
  rest = SplitRollupMask("c4v", ".v:16777215", &h);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest.value(), "");
  // A subkey that sorts before '.' ('+' of a hash, '!') stays a subkey.
  rest = SplitRollupMask("c41", ".1:1 !a:1 +abcdefghij=:2", &h);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest.value(), "!a:1 +abcdefghij=:2");
}

TEST(RollupHours, RefusesAMissingOrMalformedMask) {
  RollupHours h;
  auto why = [&](std::string_view token, std::string_view value) {
    Result<std::string_view> r = SplitRollupMask(token, value, &h);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(why("c41", "JP:3 US:5"), "rollup 'c41' has no mask of its hours");  // a file of an older merge
  EXPECT_EQ(why("c41", ""), "rollup 'c41' has no mask of its hours");
  EXPECT_EQ(why("c41", ".0:1 US:1"), "rollup mask column '.0:1' is not .{day}:{hours}");
  EXPECT_EQ(why("c4", ".w:1 US:1"), "rollup mask column '.w:1' is not .{day}:{hours}");
  EXPECT_EQ(why("c41", ".1:-1"), "rollup mask column '.1:-1' is not .{day}:{hours}");
  EXPECT_EQ(why("c41", ".1:x"), "rollup mask column '.1:x' is not .{day}:{hours}");
  EXPECT_EQ(why("c41", ".1: US:1"), "rollup mask column '.1:' is not .{day}:{hours}");
  EXPECT_EQ(why("c41", ".12:1"), "rollup mask column '.12:1' is not .{day}:{hours}");
  EXPECT_EQ(why("c41", ".1:0 US:1"), "rollup mask column '.1:0' has hours outside 1 .. 2^24 - 1");
  EXPECT_EQ(why("c41", ".1:16777216"), "rollup mask column '.1:16777216' has hours outside 1 .. 2^24 - 1");
  EXPECT_EQ(why("c41", ".1:99999999999"), "rollup mask column '.1:99999999999' is not .{day}:{hours}");
  EXPECT_EQ(why("c4", ".2:1 .1:1"), "rollup mask column '.1:1' is out of day order");
  EXPECT_EQ(why("c4", ".1:1 .1:2"), "rollup mask column '.1:2' is out of day order");
  EXPECT_EQ(why("c41", ".2:1 US:1"), "day rollup 'c41' has a mask of another day: '.2:1'");
  EXPECT_EQ(why("c41", ".1:1 .2:1"), "day rollup 'c41' has a mask of another day: '.2:1'");
  EXPECT_EQ(why("c41", ".1:1 "), "rollup mask is followed by a trailing space");
  EXPECT_EQ(why("c41l", ".1:1"), "rollup time 'c41l' is not 2 or 3 symbols");
}

TEST(RollupHours, RandomMasksRoundTrip) {
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 10000; ++i) {
    RollupHours h{};
    const bool day = rng() % 2;
    const int first = 1 + int(rng() % 31);
    for (int d = first; d <= 31; ++d) {
      if (d == first || (!day && rng() % 3 == 0)) h[size_t(d)] = 1 + uint32_t(rng() % kAllHoursOfDay);
    }
    const std::string token = day ? std::string("c4") + "0123456789abcdefghijklmnopqrstuv"[first] : "c4";
    std::string v;
    AppendRollupMasks(&v, 0, h);
    v += " US:1";
    RollupHours back;
    Result<std::string_view> rest = SplitRollupMask(token, v, &back);
    ASSERT_TRUE(rest.ok()) << v << ": " << rest.status().message();
    EXPECT_EQ(back, h);
    EXPECT_EQ(rest.value(), "US:1");
  }
}

}  // namespace
}  // namespace clickatron
