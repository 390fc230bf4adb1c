#include "base/random_id.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(RandomId64, SixteenLowercaseHexDigitsNewEachCall) {
  const std::string a = RandomId64(), b = RandomId64();
  EXPECT_EQ(a.size(), 16u);
  for (char c : a) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << a;
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace clickatron
