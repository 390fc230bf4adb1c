#include "keyformat/hex64.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(Hex64, FormatsSixteenLowercaseDigits) {
  EXPECT_EQ(Hex64(0), "0000000000000000");
  EXPECT_EQ(Hex64(0xff), "00000000000000ff");
  EXPECT_EQ(Hex64(0x0123456789abcdefull), "0123456789abcdef");
  EXPECT_EQ(Hex64(UINT64_MAX), "ffffffffffffffff");
}

TEST(Hex64, ParsesWhatItFormats) {
  for (uint64_t v : {uint64_t(0), uint64_t(1), uint64_t(0xef46db3751d8e999ull), UINT64_MAX}) {
    Result<uint64_t> back = ParseHex64(Hex64(v));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, v);
  }
}

TEST(Hex64, RefusesEveryOtherSpelling) {
  for (const char* bad : {"", "12", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF",
                          "0123456789abcdeg", " 123456789abcdef", "0x23456789abcdef", "-123456789abcdef"}) {
    EXPECT_FALSE(ParseHex64(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseHex64("0123").status().message(), "'0123' is not 16 lowercase hex digits");
}

}  // namespace
}  // namespace clickatron
