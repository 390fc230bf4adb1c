#include "realtime/closed_days.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "base/test_dir.h"

namespace clickatron::realtime {
namespace {

constexpr int64_t kDay = 15424;  // 2012-03-25

TEST(ClosedDays, FormatIsSortedAndParsesBack) {
  ClosedDays d;
  d.through = kDay;
  d.Merge(kDay, {{"api-2", 5}, {"api-1", 12}});
  d.Merge(kDay - 1, {{"api-1", 3}});
  d.Merge(kDay, {{"api-1", 11}});  // lower: kept at 12
  EXPECT_EQ(FormatClosedDays(d),
            "# clickatron-realtime closed days (docs/formats.md#realtime-closed-days)\n"
            "closed_through = 2012-03-25\n"
            "mark = 2012-03-24 api-1 3\n"
            "mark = 2012-03-25 api-1 12\n"
            "mark = 2012-03-25 api-2 5\n");
  Result<ClosedDays> back = ParseClosedDays(FormatClosedDays(d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, d);
  EXPECT_EQ(back->Mark(kDay, "api-1"), 12);
  EXPECT_EQ(back->Mark(kDay, "api-3"), -1);
  EXPECT_EQ(back->Mark(kDay - 2, "api-1"), -1);
}

TEST(ClosedDays, EmptyMeansNothingClosed) {
  Result<ClosedDays> d = ParseClosedDays(FormatClosedDays(ClosedDays{}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->through, kNoDay);
  EXPECT_TRUE(d->marks.empty());
}

TEST(ClosedDays, PruneKeepsTheLast400Days) {
  ClosedDays d;
  d.through = kDay;
  d.Merge(kDay - kClosedMarkDays, {{"a", 1}});
  d.Merge(kDay - kClosedMarkDays + 1, {{"a", 2}});
  d.Prune();
  EXPECT_EQ(d.Mark(kDay - kClosedMarkDays, "a"), -1);
  EXPECT_EQ(d.Mark(kDay - kClosedMarkDays + 1, "a"), 2);
}

TEST(ClosedDays, MalformedFilesAreNamedErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"closed_through = 2012-13-01\n", "line 1: closed_through '2012-13-01' is not a day (YYYY-MM-DD)"},
      {"closed_through = 2012-03-25\nclosed_through = 2012-03-26\n", "line 2: closed_through given twice"},
      {"closed_through = 2012-03-25\nmark = 2012-03-25 api-1\n",
       "line 2: mark '2012-03-25 api-1' is not 'YYYY-MM-DD SOURCE SEQ'"},
      {"closed_through = 2012-03-25\nmark = 2012-03-25 api-1 -4\n",
       "line 2: mark '2012-03-25 api-1 -4' is not 'YYYY-MM-DD SOURCE SEQ'"},
      {"closed_through = 2012-03-25\nmark = 2012-03-25  api-1 4\n",
       "line 2: mark '2012-03-25  api-1 4' is not 'YYYY-MM-DD SOURCE SEQ'"},
      {"closed_through = 2012-03-25\nmark = 2012-03-26 api-1 4\n",
       "a mark of 2012-03-26 is after closed_through 2012-03-25"},
      {"mark = 2012-03-25 api-1 4\n", "marks without closed_through"},
      {"closed_thru = 2012-03-25\n", "line 1: unknown key 'closed_thru'"},
      {"nonsense\n", "line 1: 'nonsense' is not 'key = value'"},
  };
  for (const auto& [text, error] : cases) {
    Result<ClosedDays> d = ParseClosedDays(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().message(), error) << text;
  }
}

TEST(ClosedDays, LoadAndSave) {
  TestDir dir;
  const std::string path = dir.path() + "/" + kClosedDaysFile;
  Result<ClosedDays> absent = LoadClosedDays(path);
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->through, kNoDay);
  ClosedDays d;
  d.through = kDay;
  d.Merge(kDay, {{"api-1", 7}});
  ASSERT_TRUE(SaveClosedDays(path, d).ok());
  Result<ClosedDays> back = LoadClosedDays(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, d);
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("closed_through = yesterday\n", f);
  std::fclose(f);
  Result<ClosedDays> bad = LoadClosedDays(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), path + ": line 1: closed_through 'yesterday' is not a day (YYYY-MM-DD)");
}

}  // namespace
}  // namespace clickatron::realtime
