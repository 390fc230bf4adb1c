#include "base/wall_clock.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <chrono>
#include <string>

#include "base/durable_file.h"
#include "base/test_dir.h"

namespace clickatron {
namespace {

TEST(WallClock, ParseClockFile) {
  EXPECT_EQ(*ParseClockFile("1333314000"), 1333314000);
  EXPECT_EQ(*ParseClockFile("1333314000\n"), 1333314000);
  EXPECT_EQ(*ParseClockFile("0"), 0);
  for (std::string_view bad : {"", "\n", "-5", "12x", " 12", "12\n\n", "1e9", "99999999999999999999"}) {
    Result<int64_t> r = ParseClockFile(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("not unix seconds"), std::string::npos);
  }
}

// The only test in this binary that reads the clock: the environment is read once.
TEST(WallClock, FollowsTheClockFileWithinTheRereadInterval) {
  TestDir dir;
  const std::string path = dir.path() + "/now";
  ASSERT_TRUE(WriteFileAtomic(path, "1333314000\n").ok());
  ASSERT_EQ(setenv("CLICKATRON_CLOCK_FILE", path.c_str(), 1), 0);
  EXPECT_EQ(WallClockSeconds(), 1333314000);
  ASSERT_TRUE(WriteFileAtomic(path, "1333400400\n").ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (WallClockSeconds() != 1333400400 && std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_EQ(WallClockSeconds(), 1333400400);
  // A broken file later keeps the last time read.
  ASSERT_TRUE(WriteFileAtomic(path, "garbage").ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3 * kWallClockRereadMs);
  while (std::chrono::steady_clock::now() < until) EXPECT_EQ(WallClockSeconds(), 1333400400);
}

}  // namespace
}  // namespace clickatron
