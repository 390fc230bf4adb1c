// Leaderboard arithmetic (leaderboard.h): the archive part's sums of a namespace's keys over a
// range, read back with realtime's hours as a breakdown's sums are.
#include "api/leaderboard.h"

#include <gtest/gtest.h>

#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

std::string Token(int64_t ts) { return std::string(EncodeYmdh(ts).value().view()); }

constexpr int64_t kDay = 20000;  // 2024-10-04
constexpr int64_t kH = kDay * 86400;

TEST(LeaderboardTest, ArchiveSumsOverTheRangeUpToTheWatermark) {
  const std::string page = "u|alice," + Token(kH) + ":5 " + Token(kH + 3600) + ":7 " + Token(kH + 86400) + ":100\n" +
                           "u|bob," + Token(kH - 3600) + ":9\n";
  std::string sums;
  size_t records = 0;
  // The range's first two hours; W = kDay.
  ASSERT_TRUE(AppendArchiveSums(page, "u", HourRange{kH, kH + 7200}, kDay, &sums, &records).ok());
  EXPECT_EQ(sums, "alice,12\nbob,0\n");
  EXPECT_EQ(records, 2u);
  // The next day is past W: realtime's, not the archive's.
  sums.clear();
  ASSERT_TRUE(AppendArchiveSums(page, "u", HourRange{kH, kH + 2 * 86400}, kDay, &sums, &records).ok());
  EXPECT_EQ(sums, "alice,12\nbob,0\n");
  sums.clear();
  ASSERT_TRUE(AppendArchiveSums(page, "u", HourRange{kH, kH + 2 * 86400}, kDay + 1, &sums, &records).ok());
  EXPECT_EQ(sums, "alice,112\nbob,0\n");
  // Not a total of u, or a column that does not parse: named errors.
  EXPECT_FALSE(AppendArchiveSums("l|x," + Token(kH) + ":1\n", "u", HourRange{kH, kH + 3600}, kDay, &sums, &records).ok());
  EXPECT_FALSE(AppendArchiveSums("c.u|x." + Token(kH) + ",US:1\n", "u", HourRange{kH, kH + 3600}, kDay, &sums, &records).ok());
  Status bad = AppendArchiveSums("u|x," + Token(kH) + ":zz\n", "u", HourRange{kH, kH + 3600}, kDay, &sums, &records);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("u|x"), std::string::npos) << bad.message();
}

TEST(LeaderboardTest, BothTiersRankedWithTheTotal) {
  const HourRange range{kH, kH + 3 * 86400};
  const std::string archive = "alice,12\nbob,0\ncarol,30\n";
  const std::string realtime = "u|alice." + Token(kH + 86400 + 3600) + ",20\n" + "u|dave." + Token(kH + 86400) + ",30\n" +
                               "u|dave." + Token(kH + 5 * 86400) + ",1000\n";  // out of range
  BreakdownSum sum(range, kDay);
  ASSERT_TRUE(sum.AddRealtimeSums(archive).ok());
  ASSERT_TRUE(sum.AddRealtime(realtime, "u|").ok());
  Int128 total = 0;
  ASSERT_TRUE(sum.Total(&total));
  EXPECT_EQ(total, 92);
  std::vector<BreakdownEntry> top =
      RankBreakdown(sum.Candidates(2), 2, [](std::string_view s) { return std::string(s); });
  EXPECT_EQ(top, (std::vector<BreakdownEntry>{{"alice", 32}, {"carol", 30}}));  // dave ties carol: by name
  QueryParams q;
  q.ns = "u";
  q.units = 3;
  q.reference_ts = kH;
  q.limit = 2;
  EXPECT_EQ(LeaderboardJson(q, 92, top),
            "{\"ns\":\"u\",\"unit\":\"day\",\"units\":3,\"unit_reference_ts\":" + std::to_string(kH) +
                ",\"tz_offset\":0,\"limit\":2,\"total\":92,\"leaderboard\":[{\"key\":\"alice\",\"value\":32},"
                "{\"key\":\"carol\",\"value\":30}]}");
}

}  // namespace
}  // namespace clickatron
