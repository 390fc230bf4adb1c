#include "base/clip.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(Clipped, ShortTextIsWhole) {
  EXPECT_EQ(Clipped("", 4), "");
  EXPECT_EQ(Clipped("abc", 4), "abc");
  EXPECT_EQ(Clipped("abcd", 4), "abcd");
}

TEST(Clipped, LongTextIsCutAndMarked) {
  EXPECT_EQ(Clipped("abcde", 4), "abcd...");
  EXPECT_EQ(Clipped(std::string(4097, 'k'), 64), std::string(64, 'k') + "...");
  EXPECT_EQ(Clipped("abc", 0), "...");
}

TEST(ClippedLine, OneLineWithoutTrailingSpace) {
  EXPECT_EQ(ClippedLine("HTTP 500\nboom\r\n", 200), "HTTP 500 boom");
  EXPECT_EQ(ClippedLine("\n\n", 200), "");
  EXPECT_EQ(ClippedLine("a\nbcdef", 3), "a b...");
}

}  // namespace
}  // namespace clickatron
