#include "base/int128.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

std::string Parsed(std::string_view text) {
  Int128 v = 12345;
  if (!ParseInt128(text, &v)) return "fails";
  return Int128ToString(v);
}

TEST(Int128Test, EdgesReadBackExactly) {
  const char* texts[] = {"0", "-1", "7", "9223372036854775807", "-9223372036854775808",
                         "9223372036854775808", "-9223372036854775809", "18446744073709551616",
                         "170141183460469231731687303715884105727", "-170141183460469231731687303715884105728",
                         "-170141183460469231731687303715884105727"};
  for (const char* t : texts) EXPECT_EQ(Parsed(t), t) << t;
}

TEST(Int128Test, ConstantsAreThePowersOfTwo) {
  EXPECT_EQ(Int128ToString(kInt128Max), "170141183460469231731687303715884105727");
  EXPECT_EQ(Int128ToString(kInt128Min), "-170141183460469231731687303715884105728");
  EXPECT_EQ(Int128ToString(Int128{INT64_MAX} + 1), "9223372036854775808");
  EXPECT_EQ(Int128ToString(Int128{INT64_MIN} - 1), "-9223372036854775809");
  EXPECT_EQ(Int128ToString(Int128{INT64_MIN}), "-9223372036854775808");
  EXPECT_EQ(Int128ToString(Int128{INT64_MAX} * 2), "18446744073709551614");
}

TEST(Int128Test, RefusesWhatIsNotADecimalOf128Bits) {
  for (const char* t : {"", "-", "+1", " 1", "1 ", "1x", "x", "0x10", "1.5", "1e3", "--1", "-+1",
                        "170141183460469231731687303715884105728", "-170141183460469231731687303715884105729",
                        "999999999999999999999999999999999999999999", "99999999999999999999x",
                        "-99999999999999999999 "}) {
    EXPECT_EQ(Parsed(t), "fails") << "'" << t << "'";
  }
}

TEST(Int128Test, LeadingZerosAsFromChars) {
  EXPECT_EQ(Parsed("007"), "7");
  EXPECT_EQ(Parsed("-0"), "0");
  EXPECT_EQ(Parsed("000000000000000000000000000000000000000000001"), "1");
}

TEST(Int128Test, AddIsCheckedAndLeavesTheSumAloneOnOverflow) {
  Int128 a = kInt128Max - 1;
  EXPECT_TRUE(AddInt128(&a, 1));
  EXPECT_TRUE(a == kInt128Max);
  EXPECT_FALSE(AddInt128(&a, 1));
  EXPECT_TRUE(a == kInt128Max);
  Int128 b = kInt128Min;
  EXPECT_FALSE(AddInt128(&b, -1));
  EXPECT_TRUE(b == kInt128Min);
  Int128 c = INT64_MAX;
  EXPECT_TRUE(AddInt128(&c, INT64_MAX));
  EXPECT_EQ(Int128ToString(c), "18446744073709551614");
}

TEST(Int128Test, FitsAndAbs) {
  EXPECT_TRUE(FitsInt64(INT64_MAX));
  EXPECT_TRUE(FitsInt64(INT64_MIN));
  EXPECT_FALSE(FitsInt64(Int128{INT64_MAX} + 1));
  EXPECT_FALSE(FitsInt64(Int128{INT64_MIN} - 1));
  EXPECT_TRUE(AbsInt128(kInt128Min) == Uint128(1) << 127);
  EXPECT_TRUE(AbsInt128(-5) == 5);
}

}  // namespace
}  // namespace clickatron
