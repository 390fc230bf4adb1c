// Unit tests of the day and month rollups of the merge (rollup.h): exact output, order,
// the limits and what is left out, CheckRollups, and a randomized comparison with sums
// computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "base/test_dir.h"
#include "keyformat/columns.h"
#include "keyformat/key_order.h"
#include "rebuild/file.h"
#include "rebuild/memory_record_writer.h"
#include "rebuild/rollup.h"
#include "rebuild/segment_merge.h"

namespace clickatron::rebuild {
namespace {

using MemoryWriter = MemoryRecordWriter;

// The lines of `file` whose key's time (after the last '.') is not 2 or 3 symbols long.
std::string WithoutRollups(const std::string& file) {
  std::string out;
  size_t pos = 0;
  while (pos < file.size()) {
    const size_t nl = file.find('\n', pos);
    const std::string line = file.substr(pos, nl + 1 - pos);
    pos = nl + 1;
    const std::string key(KeyOfLine(line));
    const size_t first = key.find_first_of(".|");
    if (first != std::string::npos && key[first] == '.') {
      const size_t time = key.size() - key.rfind('.') - 1;
      if (time == 2 || time == 3) continue;
    }
    out += line;
  }
  return out;
}

std::string Roll(const std::string& input, RollupLimits limits = {}, RollupStats* stats = nullptr,
                 bool by_lines = true) {
  MemoryWriter mem;
  RollupWriter w(&mem, limits);
  Status s;
  if (by_lines) {
    s = w.AddLines(input, 0, 0);  // counts are recomputed
  } else {
    size_t pos = 0;
    while (s.ok() && pos < input.size()) {
      const size_t nl = input.find('\n', pos);
      const std::string_view line(input.data() + pos, nl - pos);
      const size_t comma = line.find(',');
      s = w.Add(line.substr(0, comma), line.substr(comma + 1), 0);
      pos = nl + 1;
    }
  }
  if (s.ok()) s = w.Finish();
  EXPECT_TRUE(s.ok()) << s.message();
  if (stats) *stats = w.stats();
  return mem.bytes;
}

const char kTwoDays[] =
    "_l|h0aMB8AuNw4=,http://www.facebook.com/\n"
    "c.u|jehiah.c41k,JP:1 US:2\n"
    "c.u|jehiah.c41l,US:3\n"
    "c.u|jehiah.c420,US:1\n"
    "c.u|jehiah.c421,US:1\n"
    "c.u|jehiah.c51l,DE:7\n"
    "u|jehiah,c41k:3 c41l:3 c420:1 c421:1 c51l:7\n";

TEST(Rollup, DaysAndMonthsSortBeforeTheirHours) {
  RollupStats stats;
  RollupLimits always;
  always.min_fold = 1;
  const std::string out = Roll(kTwoDays, always, &stats);
  EXPECT_EQ(out,
            "_l|h0aMB8AuNw4=,http://www.facebook.com/\n"
            "c.u|jehiah.c4,.1:3145728 .2:3 JP:1 US:7\n"
            "c.u|jehiah.c41,.1:3145728 JP:1 US:5\n"
            "c.u|jehiah.c41k,JP:1 US:2\n"
            "c.u|jehiah.c41l,US:3\n"
            "c.u|jehiah.c42,.2:3 US:2\n"
            "c.u|jehiah.c420,US:1\n"
            "c.u|jehiah.c421,US:1\n"
            "c.u|jehiah.c51l,DE:7\n"  // one hour, one day: nothing to roll up
            "u|jehiah,c41k:3 c41l:3 c420:1 c421:1 c51l:7\n");
  EXPECT_EQ(stats.days, 2u);
  EXPECT_EQ(stats.months, 1u);
  EXPECT_EQ(Roll(kTwoDays, always, nullptr, /*by_lines=*/false), out);
  EXPECT_TRUE(CheckRollups(out).ok()) << CheckRollups(out).message();
  EXPECT_EQ(WithoutRollups(out), kTwoDays);
}

TEST(Rollup, OnlyRollupsThatFoldAreWritten) {
  // Default min_fold 2: c41 sums 3 hour columns into 2 (no), c42 2 into 1 (yes), the
  // month 5 into 2 (yes).
  RollupStats stats;
  const std::string out = Roll(kTwoDays, {}, &stats);
  EXPECT_EQ(out,
            "_l|h0aMB8AuNw4=,http://www.facebook.com/\n"
            "c.u|jehiah.c4,.1:3145728 .2:3 JP:1 US:7\n"
            "c.u|jehiah.c41k,JP:1 US:2\n"
            "c.u|jehiah.c41l,US:3\n"
            "c.u|jehiah.c42,.2:3 US:2\n"
            "c.u|jehiah.c420,US:1\n"
            "c.u|jehiah.c421,US:1\n"
            "c.u|jehiah.c51l,DE:7\n"
            "u|jehiah,c41k:3 c41l:3 c420:1 c421:1 c51l:7\n");
  EXPECT_EQ(stats.days, 1u);
  EXPECT_EQ(stats.months, 1u);
  EXPECT_EQ(stats.unfolded, 1u);
}

// The example of docs/formats.md#rollup-records, as written there.
TEST(Rollup, TheDocumentedExample) {
  const std::string in =
      "c.u|jehiah.c41k,JP:1 US:2\n"
      "c.u|jehiah.c41l,JP:2 US:3\n"
      "c.u|jehiah.c420,US:1\n"
      "c.u|jehiah.c421,US:1\n"
      "c.u|jehiah.c51l,DE:7\n"
      "u|jehiah,c41k:3 c41l:5 c420:1 c421:1 c51l:7\n";
  EXPECT_EQ(Roll(in),
            "c.u|jehiah.c4,.1:3145728 .2:3 JP:3 US:7\n"
            "c.u|jehiah.c41,.1:3145728 JP:3 US:5\n"
            "c.u|jehiah.c41k,JP:1 US:2\n"
            "c.u|jehiah.c41l,JP:2 US:3\n"
            "c.u|jehiah.c42,.2:3 US:2\n"
            "c.u|jehiah.c420,US:1\n"
            "c.u|jehiah.c421,US:1\n"
            "c.u|jehiah.c51l,DE:7\n"
            "u|jehiah,c41k:3 c41l:5 c420:1 c421:1 c51l:7\n");
}

TEST(Rollup, KeysThatShareAPrefixAreSeparateGroups) {
  // `jehiah-x` sorts before `jehiah.`, `jehiahx` after every `jehiah.` record.
  const std::string in =
      "c.u|jehiah-x.c41k,US:1\n"
      "c.u|jehiah-x.c41l,US:1\n"
      "c.u|jehiah.c41k,US:1\n"
      "c.u|jehiah.c41l,US:1\n"
      "c.u|jehiahx.c41k,US:1\n"
      "c.u|jehiahx.c41l,US:1\n"
      "r.u|jehiah.c41k,US:1\n"
      "r.u|jehiah.c41l,US:1\n";
  const std::string out = Roll(in);
  EXPECT_EQ(out,
            "c.u|jehiah-x.c41,.1:3145728 US:2\n"
            "c.u|jehiah-x.c41k,US:1\n"
            "c.u|jehiah-x.c41l,US:1\n"
            "c.u|jehiah.c41,.1:3145728 US:2\n"
            "c.u|jehiah.c41k,US:1\n"
            "c.u|jehiah.c41l,US:1\n"
            "c.u|jehiahx.c41,.1:3145728 US:2\n"
            "c.u|jehiahx.c41k,US:1\n"
            "c.u|jehiahx.c41l,US:1\n"
            "r.u|jehiah.c41,.1:3145728 US:2\n"
            "r.u|jehiah.c41k,US:1\n"
            "r.u|jehiah.c41l,US:1\n");
  EXPECT_TRUE(CheckRollups(out).ok());
}

TEST(Rollup, SumsThatCancelAreNotWrittenAndSumsPastInt64AreExact) {
  const std::string in =
      "c.u|a.c41k,US:5\n"
      "c.u|a.c41l,US:-5\n"
      "c.u|b.c41k,US:9223372036854775807\n"
      "c.u|b.c41l,US:1\n"
      "c.u|b.c420,US:1\n"
      "c.u|b.c421,US:1\n";
  RollupStats stats;
  const std::string out = Roll(in, {}, &stats);
  // a: zero, nothing to write. b: day c41 leaves int64 (summed in 128 bits, and so is its
  // month); c42 is an ordinary day.
  EXPECT_EQ(out,
            "c.u|a.c41k,US:5\n"
            "c.u|a.c41l,US:-5\n"
            "c.u|b.c4,.1:3145728 .2:3 US:9223372036854775810\n"
            "c.u|b.c41,.1:3145728 US:9223372036854775808\n"
            "c.u|b.c41k,US:9223372036854775807\n"
            "c.u|b.c41l,US:1\n"
            "c.u|b.c42,.2:3 US:2\n"
            "c.u|b.c420,US:1\n"
            "c.u|b.c421,US:1\n");
  EXPECT_EQ(stats.days, 2u);
  EXPECT_EQ(stats.months, 1u);
  EXPECT_EQ(stats.limited, 0u);
  EXPECT_TRUE(CheckRollups(out).ok());
}

// Hour counts past int64 (an hour of 2^64 increments of one) are read and summed in 128
// bits; a day whose sums leave 128 bits, and its month, get no rollup, and readers sum
// those hours (and fail naming the sum).
TEST(Rollup, HourCountsPastInt64AndSumsPast128Bits) {
  const std::string in =
      "c.u|k.c410,US:18446744073709551616\n"
      "c.u|k.c411,US:-170141183460469231731687303715884105728\n"
      "c.u|k.c420,US:170141183460469231731687303715884105727\n"
      "c.u|k.c421,US:170141183460469231731687303715884105727\n";
  RollupStats stats;
  const std::string out = Roll(in, {}, &stats);
  EXPECT_EQ(out, "c.u|k.c41,.1:3 US:-170141183460469231713240559642174554112\n" + in);
  EXPECT_EQ(stats.days, 1u);
  EXPECT_EQ(stats.months, 0u);
  EXPECT_EQ(stats.limited, 2u);  // day c42 and the month
  EXPECT_TRUE(CheckRollups(out).ok());
  EXPECT_EQ(CheckRollups("c.u|k.c42,.2:3 US:1\nc.u|k.c420,US:170141183460469231731687303715884105727\n"
                         "c.u|k.c421,US:170141183460469231731687303715884105727\n").message(),
            "rollup 'c.u|k.c42' sums past 128 bits");
}

TEST(Rollup, HeldBytesLimitDropsTheMonthThenTheDay) {
  std::string in;
  for (char day : std::string("123")) {
    for (char hour : std::string("0123")) in += std::string("c.u|k.c4") + day + hour + ",US:1\n";
  }
  in += "c.u|k.c44" + std::string("0") + ",JP:1\n";
  RollupLimits small;
  small.max_held_bytes = 5 * 16;  // five hour lines (16 bytes each): not a month of them
  RollupStats stats;
  std::string out = Roll(in, small, &stats);
  EXPECT_EQ(WithoutRollups(out), in);
  EXPECT_EQ(out.find("c.u|k.c4,"), std::string::npos);
  for (const char* day : {"c.u|k.c41,.1:15 US:4\n", "c.u|k.c42,.2:15 US:4\n", "c.u|k.c43,.3:15 US:4\n"}) {
    EXPECT_NE(out.find(day), std::string::npos) << day << out;
  }
  EXPECT_EQ(stats.months, 0u);
  EXPECT_EQ(stats.days, 3u);
  EXPECT_EQ(stats.limited, 1u);
  EXPECT_TRUE(CheckRollups(out).ok());
  // Three lines of a day past the limit: no rollup of that day, every hour still there.
  small.max_held_bytes = 2 * 16;
  out = Roll(in, small, &stats);
  EXPECT_EQ(out, in);
  EXPECT_EQ(stats.days + stats.months, 0u);
  // A column limit: rollups of more subkeys are left out.
  RollupLimits narrow;
  narrow.max_columns = 0;
  out = Roll(in, narrow, &stats);
  EXPECT_EQ(out, in);
}

TEST(Rollup, RollupsInTheInputAreReplaced) {
  const std::string in =
      "c.u|k.c4,US:99\n"
      "c.u|k.c41,US:98\n"
      "c.u|k.c410,US:1\n"
      "c.u|k.c411,US:1\n";
  RollupStats stats;
  const std::string out = Roll(in, {}, &stats);
  EXPECT_EQ(out, "c.u|k.c41,.1:3 US:2\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n");
  EXPECT_EQ(stats.dropped, 2u);
}

TEST(Rollup, MalformedHourValuesAreErrors) {
  for (const char* line : {"c.u|k.c410,US\n", "c.u|k.c410,US:\n", "c.u|k.c410,:1\n", "c.u|k.c410,US:1 \n",
                           "c.u|k.c410,US:1x\n", "c.u|k.c410,US:170141183460469231731687303715884105728\n",
                           "c.u|k.c410,US:99999999999999999999x\n", "c.u|k.c410,US:1  JP:2\n",
                           // names long enough to be searched eight bytes at a time
                           "c.u|k.c410,abcdefghij klmnop:1\n", "c.u|k.c410,abcdefghijklmnopqrstu\n",
                           "c.u|k.c410,abcdefghijk:1 lmnopqrstuvw xyz:2\n", "c.u|k.c410,abcdefgh:1 :2345678901\n"}) {
    MemoryWriter mem;
    RollupWriter w(&mem);
    const Status s = w.AddLines(line, 1, 1);
    EXPECT_NE(s.message().find("key 'c.u|k.c410': column"), std::string::npos) << line << s.message();
  }
}

TEST(Rollup, CountsAtTheEdgesOfInt64) {
  const std::string in =
      "c.u|k.c410,US:-9223372036854775808\n"
      "c.u|k.c411,US:9223372036854775807\n";
  EXPECT_EQ(Roll(in), "c.u|k.c41,.1:3 US:-1\n" + in);
}

TEST(Rollup, CheckRollupsNamesAWrongRollup) {
  EXPECT_TRUE(CheckRollups("c.u|k.c4,.1:3 US:2\nc.u|k.c41,.1:3 US:2\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n").ok());
  Status s = CheckRollups("c.u|k.c4,.1:3 US:3\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n");
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c4' is '.1:3 US:3', its hours make '.1:3 US:2'");
  s = CheckRollups("c.u|k.c41,.1:3 US:1\nc.u|k.c410,US:1\nc.u|k.c411,JP:1\n");
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c41' is '.1:3 US:1', its hours make '.1:3 JP:1 US:1'");
  s = CheckRollups("c.u|k.c41,.1:1 US:1\n");  // no hours at all
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c41' is '.1:1 US:1', its hours make ''");
  s = CheckRollups("c.u|k.c410,US:1\nc.u|k.c41,US:1\n");
  EXPECT_NE(s.message().find("out of order"), std::string::npos);
  // The mask names exactly the hours summed: not one more (an hour of no record), not one
  // less, and a rollup of an older merge (no mask) is wrong.
  s = CheckRollups("c.u|k.c41,.1:7 US:2\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n");
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c41' is '.1:7 US:2', its hours make '.1:3 US:2'");
  s = CheckRollups("c.u|k.c41,.1:1 US:2\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n");
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c41' is '.1:1 US:2', its hours make '.1:3 US:2'");
  s = CheckRollups("c.u|k.c41,US:2\nc.u|k.c410,US:1\nc.u|k.c411,US:1\n");
  EXPECT_EQ(s.message(), "rollup 'c.u|k.c41' is 'US:2', its hours make '.1:3 US:2'");
  s = CheckRollups("c.u|k.c41,.1:3 US:2\nc.u|k.c410,US:1\nc.u|k.c41z,US:1\n");
  EXPECT_EQ(s.message(), "line 3: 'c.u|k.c41z' has no day and hour symbols");
}

// An hour whose subtotals cancel is still one of the hours summed: its bit is in the mask.
TEST(Rollup, TheMaskNamesEveryHourSummedEvenOneThatCancels) {
  const std::string in =
      "c.u|k.c410,US:2\n"
      "c.u|k.c411,JP:1 US:-1\n"
      "c.u|k.c41n,JP:-1 US:2\n";
  const std::string out = Roll(in);
  EXPECT_EQ(out, "c.u|k.c41,.1:8388611 US:3\n" + in);  // hours 0, 1 and 23
  EXPECT_TRUE(CheckRollups(out).ok()) << CheckRollups(out).message();
}

// Random keys over several months, random limits, random chunking: the hours come out
// unchanged, every rollup is right (CheckRollups), and without limits every day and month
// that sums two or more hours (days) to something has its rollup.
TEST(Rollup, RandomizedAgainstSumsComputedHere) {
  std::mt19937_64 rng(7);
  // Names of 8 bytes and longer that share their first 8 bytes (compared past the prefix).
  const char* subkeys[] = {"AR", "DE", "JP", "US", "abcdefgh", "abcdefgh+", "abcdefghA", "h0aMB8AuNw4=", "z"};
  for (int round = 0; round < 200; ++round) {
    std::string in;
    const int groups = 1 + int(rng() % 4);
    std::map<std::string, std::map<std::string, int64_t>> expected;  // time key → sums
    std::map<std::string, int> hours_of, days_of;
    std::vector<std::string> names;
    for (int g = 0; g < groups; ++g) names.push_back(std::string(g % 2 ? "r" : "c") + ".u|k" + std::to_string(g) + ".");
    std::sort(names.begin(), names.end());
    for (const std::string& group : names) {
      for (char month : std::string("45")) {
        for (char day : std::string("12n")) {
          bool any = false;
          for (char hour : std::string("05an")) {
            if (rng() % 3 == 0) continue;
            std::string value;
            for (const char* sk : subkeys) {
              if (rng() % 3) continue;
              const int64_t n = int64_t(rng() % 5) - 1;
              if (n == 0) continue;
              AppendColumn(&value, 0, sk, n);
              expected[group + "c" + month + day][sk] += n;
              expected[group + "c" + month][sk] += n;
            }
            if (value.empty()) continue;
            in += group + "c" + month + day + hour + "," + value + "\n";
            hours_of[group + "c" + month + day]++;
            any = true;
          }
          if (any) days_of[group + "c" + month]++;
        }
      }
    }
    in += "u|k,c410:1\n";
    RollupLimits limits;
    limits.min_fold = 1;
    const bool limited = round % 2 == 1;
    if (limited) {
      limits.max_held_bytes = rng() % 400;
      limits.max_columns = rng() % 6;
    }
    const std::string out = Roll(in, limits, nullptr, round % 3 != 0);
    ASSERT_EQ(WithoutRollups(out), in);
    ASSERT_TRUE(CheckRollups(out).ok()) << CheckRollups(out).message() << "\n" << out;
    if (limited) continue;
    for (const auto& [time_key, sums] : expected) {
      bool nonzero = false;
      for (const auto& [sk, n] : sums) nonzero |= n != 0;
      const bool is_day = time_key.size() - time_key.rfind('.') - 1 == 3;
      const bool due = nonzero && (is_day ? hours_of[time_key] >= 2 : days_of[time_key] >= 2);
      EXPECT_EQ(out.find(time_key + ",") != std::string::npos, due) << time_key << "\n" << out;
    }
  }
}

// Days and months of many columns (summed in a hash table, then sorted): every rollup is
// what CheckRollups sums with 128-bit integers, names that cancel are left out.
TEST(Rollup, ManyColumnsAreSummedByName) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    std::string in;
    const int names = 1 + int(rng() % 300);
    for (char day : std::string("12345")) {
      for (char hour : std::string("0123456789abcdefghijklmn")) {
        if (rng() % 4 == 0) continue;
        std::string value;
        for (int i = 0; i < names; ++i) {
          if (rng() % 3 == 0) continue;
          // Long names that share their first 8 bytes, short ones, and counts that cancel.
          const std::string name = (i % 3 ? "n" : "referrer") + std::to_string(i * 7919 % 1000);
          const int64_t n = int64_t(rng() % 5) - 2;
          if (n != 0) AppendColumn(&value, 0, name, n);
        }
        if (!value.empty()) in += std::string("c.u|k.c4") + day + hour + "," + value + "\n";
      }
    }
    // Names within one line must be in order, each once: AppendColumn keeps them as given.
    std::string sorted;
    for (size_t pos = 0; pos < in.size();) {
      const size_t nl = in.find('\n', pos);
      const std::string line = in.substr(pos, nl - pos);
      pos = nl + 1;
      const size_t comma = line.find(',');
      std::map<std::string, int64_t> cols;
      ColumnReader reader(std::string_view(line).substr(comma + 1));
      Column c;
      while (reader.Next(&c)) cols[std::string(c.name)] += c.count;
      std::string value;
      for (const auto& [name, n] : cols) {
        if (n != 0) AppendColumn(&value, 0, name, n);
      }
      if (!value.empty()) sorted += line.substr(0, comma + 1) + value + "\n";
    }
    RollupLimits limits;
    limits.min_fold = 1;
    RollupStats stats;
    const std::string out = Roll(sorted, limits, &stats);
    ASSERT_EQ(WithoutRollups(out), sorted);
    ASSERT_TRUE(CheckRollups(out).ok()) << CheckRollups(out).message();
    EXPECT_GT(stats.days, 0u);
  }
}

// The merge writes through a RollupWriter like `merge` does: hours from two segments are
// summed first, then rolled up.
TEST(Rollup, MergeOfSegmentsWithRollups) {
  TestDir dir;
  std::vector<std::string> paths;
  const char* days[2][3] = {{"c.u|k.c41k", "US:1", "c.u|k.c41l"}, {"c.u|k.c41l", "US:2", "c.u|k.c420"}};
  for (int i = 0; i < 2; ++i) {
    const std::string path = dir.path() + "/in" + std::to_string(i) + ".seg";
    SortedFileWriter w;
    ASSERT_TRUE(w.Open(path, true).ok());
    ASSERT_TRUE(w.Add(days[i][0], days[i][1], 1).ok());
    ASSERT_TRUE(w.Add(days[i][2], "US:1", 1).ok());
    ASSERT_TRUE(w.Finish().ok());
    paths.push_back(path);
  }
  for (unsigned threads : {1u, 2u}) {
    const std::string out_path = dir.path() + "/out" + std::to_string(threads);
    SortedFileWriter out;
    ASSERT_TRUE(out.Open(out_path, false).ok());
    RollupWriter rollups(&out);
    MergeStats stats;
    ASSERT_TRUE(MergeSegments(paths, &rollups, &stats, nullptr, nullptr, threads).ok());
    ASSERT_TRUE(rollups.Finish().ok());
    ASSERT_TRUE(out.Finish().ok());
    EXPECT_EQ(*ReadSmallFile(out_path),
              "c.u|k.c4,.1:3145728 .2:1 US:5\nc.u|k.c41,.1:3145728 US:4\nc.u|k.c41k,US:1\nc.u|k.c41l,US:3\n"
              "c.u|k.c420,US:1\n");
    EXPECT_EQ(out.summary().columns, 3u);  // rollup columns are not data points
  }
}

}  // namespace
}  // namespace clickatron::rebuild
